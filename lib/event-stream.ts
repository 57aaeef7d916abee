// Fans the event log out to subscribers. One poller per process reads the log by sequence
// number and hands each new event to every live subscriber; a subscriber that resumes from
// an earlier position first catches up from the log. Every process reads the same log, so
// any instance can serve any subscriber.
import { AppError } from './errors';
import type { EventLog, LoggedEvent } from './event-log';
import type { Logger } from './logger';
import { eventStreamConnections } from './metrics';
import { Poller, startPoller } from './poller';

export interface StreamEvent {
  seq: number;
  eventId: string;
  type: string;
  userId: string;
  resourceId: string;
  occurredAt: Date;
  data: Record<string, unknown>;
}

export interface SubscribeOptions {
  /** Only this user's events; null for every user's (admins). */
  userId: string | null;
  /** Resume after this sequence number; undefined: only events from now on. */
  after?: number;
  types?: string[];
  /** Ends the stream (without error) after delivering an event this returns true for. */
  endAfter?: (event: StreamEvent) => boolean;
  /**
   * Ends the stream with the error this returns for an event, before delivering it: the event
   * takes the subscriber's right to read it away (its scope, its account).
   */
  refuse?: (event: StreamEvent) => Error | undefined;
}

interface Subscriber {
  userId: string | null;
  queue: StreamEvent[];
  overflowed: boolean;
  /** The consumer is gone (return() was called). */
  closed: boolean;
  wake?: () => void;
}

const PAGE = 500;

const toStreamEvent = (e: LoggedEvent): StreamEvent => ({
  seq: e.seq,
  eventId: e.eventId,
  type: e.type,
  userId: e.userId,
  resourceId: e.resourceId,
  occurredAt: e.occurredAt,
  data: JSON.parse(e.payload) as Record<string, unknown>,
});

export class EventStream {
  private readonly subscribers = new Set<Subscriber>();
  private head = 0;
  private poller?: Poller;
  private stopped = false;

  constructor(
    private readonly log: EventLog,
    private readonly options: { pollMs: number; bufferSize: number; logger?: Logger; maxPollMs?: number },
  ) {}

  /**
   * Reads the log at once when this process appends to it; otherwise (appends by other processes)
   * every `pollMs`, backing off to `maxPollMs` while the log does not move.
   */
  async start(): Promise<void> {
    this.head = (await this.log.position()).lastSeq;
    this.poller = startPoller({
      name: 'event log poll',
      intervalMs: this.options.pollMs,
      maxIntervalMs: this.options.maxPollMs,
      work: () => this.poll(),
      // This process's appends (table), or every process's (JetStream, NATS messages: no polling).
      wakeWith: (wake) => this.log.onAppend(wake),
      idlePoll: !this.log.backend.wakesAcrossProcesses,
      logger: this.options.logger,
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.poller?.stop();
    for (const s of this.subscribers) s.wake?.();
  }

  get subscriberCount(): number {
    return this.subscribers.size;
  }

  /** True when the log had moved. */
  private async poll(): Promise<boolean> {
    const before = this.head;
    if (!this.subscribers.size) {
      // Nobody listens: just keep up with the head, cheaply.
      this.head = (await this.log.position()).lastSeq;
      return this.head !== before;
    }
    for (;;) {
      const rows = await this.log.read(this.head, PAGE);
      for (const row of rows) {
        this.head = row.seq;
        const event = toStreamEvent(row);
        for (const s of this.subscribers) {
          if (s.userId !== null && s.userId !== event.userId) continue;
          if (s.queue.length >= this.options.bufferSize) s.overflowed = true;
          else s.queue.push(event);
          s.wake?.();
        }
      }
      if (rows.length < PAGE) return this.head !== before;
    }
  }

  /**
   * Throws `resync_required` when events after `after` have been pruned already, and
   * `validation_error` when `after` lies past the end of the log: no event was ever given that
   * position, so a stream from there would wait for positions the client has skipped.
   */
  async checkResumable(after: number | undefined): Promise<void> {
    if (after === undefined) return;
    const { prunedThrough, lastSeq } = await this.log.position();
    if (after < prunedThrough) {
      throw new AppError(
        'resync_required',
        `Events up to position ${prunedThrough} are no longer kept; start again without a position and reload your data.`,
      );
    }
    if (after > lastSeq) {
      throw new AppError(
        'validation_error',
        `Position ${after} lies past the end of the event stream (its newest position is ${lastSeq}); start again without a position.`,
        {
          after: ['is past the end of the event stream'],
        },
      );
    }
  }

  /**
   * The events of one user (or all), from `after` on, with no gap and no duplicate: the
   * subscriber is registered for live events before it catches up from the log, and
   * anything at or below what it has delivered is skipped.
   */
  subscribe(opts: SubscribeOptions): AsyncGenerator<StreamEvent> {
    const sub: Subscriber = { userId: opts.userId, queue: [], overflowed: false, closed: false };
    this.subscribers.add(sub);
    eventStreamConnections.inc();
    const events = this.deliver(sub, opts);
    // A generator waiting for the next event would see return() only after that event
    // arrives; waking it first lets a consumer that leaves be forgotten at once.
    const close = events.return.bind(events);
    events.return = (value) => {
      sub.closed = true;
      sub.wake?.();
      return close(value);
    };
    return events;
  }

  private async *deliver(sub: Subscriber, opts: SubscribeOptions): AsyncGenerator<StreamEvent> {
    const wanted = (e: StreamEvent) => !opts.types?.length || opts.types.includes(e.type);
    try {
      let last = opts.after ?? (await this.log.position()).lastSeq;
      for (;;) {
        const rows = await this.log.read(last, PAGE, opts.userId ?? undefined);
        for (const row of rows) {
          last = row.seq;
          const event = toStreamEvent(row);
          const refused = opts.refuse?.(event);
          if (refused) throw refused;
          if (wanted(event)) yield event;
          if (opts.endAfter?.(event)) return;
        }
        if (rows.length < PAGE) break;
      }
      while (!this.stopped && !sub.closed) {
        const event = sub.queue.shift();
        if (!event) {
          // Fell too far behind: what the buffer held is delivered, then the stream ends and
          // the client resumes from the last event it got (Last-Event-ID).
          if (sub.overflowed) return;
          await new Promise<void>((resolve) => (sub.wake = resolve));
          sub.wake = undefined;
          continue;
        }
        if (event.seq <= last) continue;
        last = event.seq;
        const refused = opts.refuse?.(event);
        if (refused) throw refused;
        if (wanted(event)) yield event;
        if (opts.endAfter?.(event)) return;
      }
    } finally {
      if (this.subscribers.delete(sub)) eventStreamConnections.dec();
    }
  }
}
