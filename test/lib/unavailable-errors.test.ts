// Which errors mean "a dependency is not there right now" (503) rather than a fault (500):
// the NATS client's, raised while the JetStream event log or object store is down (the
// multi-host test saw every authenticated request answer 500 then: the revocation check reads
// the stream's head and timed out).
import { errors } from '@nats-io/nats-core';
import { isUnavailableError } from '../../lib/graphql-errors';

describe('isUnavailableError', () => {
  it.each([
    ['a request without an answer in time', new errors.TimeoutError()],
    ['no responder (JetStream not there)', new errors.NoRespondersError('$JS.API.STREAM.INFO.x')],
    ['a closed connection', new errors.ClosedConnectionError()],
    ['a wrapped one', Object.assign(new Error('read failed'), { cause: new errors.TimeoutError() })],
  ])('%s is a dependency unavailable', (_what, err) => {
    expect(isUnavailableError(err)).toBe(true);
  });

  it('leaves other errors faults', () => {
    expect(isUnavailableError(new Error('boom'))).toBe(false);
    expect(isUnavailableError(new TypeError('x is undefined'))).toBe(false);
  });
});
