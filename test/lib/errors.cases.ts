// The error table (lib/errors.ts): every code a caller can meet has a status and a message of
// its own. The default message is what a REST client reads when the thrower had nothing more
// precise to say (body-parser's refusals, a bare AppError), and the OpenAPI document lists it.
import {
  AppError,
  DEFAULT_MESSAGES,
  ERROR_STATUS,
  ErrorCode,
  errorHeaders,
  isErrorCode,
  validationError,
} from '../../lib/errors';

const codes = Object.keys(ERROR_STATUS) as ErrorCode[];

describe('error table', () => {
  it('gives every code a sentence of its own', () => {
    expect(Object.keys(DEFAULT_MESSAGES).sort()).toEqual([...codes].sort());
    for (const code of codes) {
      // A sentence a person can read: capitalised, ended, more than a word.
      expect(DEFAULT_MESSAGES[code]).toMatch(/^[A-Z].{10,}[.)]$/);
    }
    expect(new Set(Object.values(DEFAULT_MESSAGES)).size).toBe(codes.length);
  });

  it('says what the status means for the codes a client acts on', () => {
    // The words a client's developer searches for; a message that lost them misleads.
    expect(DEFAULT_MESSAGES.unauthorized).toMatch(/authentication/i);
    expect(DEFAULT_MESSAGES.not_found).toMatch(/not exist/);
    expect(DEFAULT_MESSAGES.unsupported_media_type).toContain('application/json');
    expect(DEFAULT_MESSAGES.rate_limit_exceeded).toMatch(/too many requests/i);
    expect(DEFAULT_MESSAGES.resync_required).toMatch(/no longer kept/);
    expect(DEFAULT_MESSAGES.payload_too_large).toMatch(/too large/);
    expect(DEFAULT_MESSAGES.service_unavailable).toMatch(/unavailable/);
  });

  it('maps each code to its HTTP status', () => {
    expect(ERROR_STATUS).toEqual({
      validation_error: 400,
      unauthorized: 401,
      forbidden: 403,
      not_found: 404,
      method_not_allowed: 405,
      not_acceptable: 406,
      conflict: 409,
      resync_required: 410,
      payload_too_large: 413,
      unsupported_media_type: 415,
      range_not_satisfiable: 416,
      rate_limit_exceeded: 429,
      internal_error: 500,
      service_unavailable: 503,
    });
  });

  it('gives the challenge to unauthorized answers and a wait to every 429, and nothing to the rest', () => {
    expect(errorHeaders('unauthorized')).toEqual({ 'www-authenticate': 'Bearer' });
    expect(errorHeaders('rate_limit_exceeded')).toEqual({ 'retry-after': '1' });
    expect(errorHeaders('rate_limit_exceeded', 30)).toEqual({ 'retry-after': '30' });
    expect(errorHeaders('service_unavailable', 5)).toEqual({ 'retry-after': '5' });
    for (const code of codes.filter((c) => c !== 'unauthorized' && c !== 'rate_limit_exceeded'))
      expect(errorHeaders(code)).toEqual({});
  });

  it('recognises only the codes of the table', () => {
    for (const code of codes) expect(isErrorCode(code)).toBe(true);
    for (const other of ['toString', '__proto__', 'hasOwnProperty', 'NOT_FOUND', '', 404, null, undefined]) {
      expect(isErrorCode(other)).toBe(false);
    }
  });

  it('builds an AppError whose extensions carry code, details and retryAfter only when given', () => {
    const bare = new AppError('forbidden');
    expect(bare.message).toBe(DEFAULT_MESSAGES.forbidden);
    expect(bare.extensions).toEqual({ code: 'forbidden' });

    const full = new AppError('rate_limit_exceeded', 'Slow down.', { username: ['locked'] }, 0);
    expect(full.message).toBe('Slow down.');
    expect(full.extensions).toEqual({ code: 'rate_limit_exceeded', details: { username: ['locked'] }, retryAfter: 0 });

    const invalid = validationError({ name: ['is required'] });
    expect(invalid.code).toBe('validation_error');
    expect(invalid.message).toBe(DEFAULT_MESSAGES.validation_error);
    expect(invalid.extensions.details).toEqual({ name: ['is required'] });
  });
});
