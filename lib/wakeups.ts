// Wake-ups across processes: "there is new work for topic X" (new jobs in a module's queue). In one
// process a commit wakes its own loops (lib/database/transactions.ts onCommit); with EVENT_LOG_URL
// set the event log's NATS connection carries the same signal to every process
// (`<EVENT_LOG_STREAM>-wake.<topic>`), so their loops need not poll MySQL while nothing happens.
// Without a transport (the table log) loops keep their back-off polls for other processes' writes.

export interface WakeTransport {
  notify(topic: string): void;
  listen(topic: string, listener: () => void): () => void;
}

let transport: WakeTransport | undefined;

/** Set by the event log when it runs on NATS (one per process; the last opened wins). */
export function setWakeTransport(t: WakeTransport | undefined): void {
  transport = t;
}

export function clearWakeTransport(t: WakeTransport): void {
  if (transport === t) transport = undefined;
}

/** Whether wake-ups reach other processes: loops may then stop polling while idle. */
export function wakesAcrossProcesses(): boolean {
  return transport !== undefined;
}

/** Tells every process (this one's listeners too, through the server) that `topic` has work. */
export function notifyAcross(topic: string): void {
  transport?.notify(topic);
}

/** Runs `listener` on every process's notifyAcross(topic); a no-op without a transport. */
export function listenAcross(topic: string, listener: () => void): () => void {
  return transport ? transport.listen(topic, listener) : () => undefined;
}
