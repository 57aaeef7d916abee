// Reading the shared event log directly, to count what was appended (a stream shows what one
// reader got; the log shows what was written).
import { EventLog, LoggedEvent } from '../../lib/event-log';
import type { Config } from '../../lib/config';
import { until } from './wait';

export { EventLog };

export const loggedFor = (log: EventLog, resourceId: string, type?: string): Promise<LoggedEvent[]> =>
  log.dataSource.manager.find(LoggedEvent, {
    where: type ? { resourceId, type } : { resourceId },
    order: { seq: 'ASC' },
  });

/**
 * Waits until `resourceId` has an event of `type` in the log. Relays append outbox rows in
 * commit order, so once a sentinel written last is there, everything written before it is too.
 */
export const untilLogged = (log: EventLog, resourceId: string, type: string) =>
  until(async () => (await loggedFor(log, resourceId, type))[0], `${type} of ${resourceId} in the event log`);

export const openLog = (config: Config) => EventLog.open(config);
