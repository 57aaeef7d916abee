// Wake-ups across processes: "there is new work for topic X" (new jobs in a module's queue). In one
// process a commit wakes its own loops (lib/database/transactions.ts onCommit); with EVENT_LOG_URL
// set the event log's NATS connection carries the same signal to every process
// (`<EVENT_LOG_STREAM>-wake.<topic>`), so their loops need not poll MySQL while nothing happens.
// Without a transport (the table log) loops keep their back-off polls for other processes' writes.

import type { DataSource } from 'typeorm';
import { onCommit } from './database/transactions';

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

// ---- work added in a transaction: told to every process once it commits -------------------

const added = new WeakMap<DataSource, Set<string>>();

/**
 * Marks that the transaction under way on `dataSource` adds work for `topic` (a due delivery, a
 * pending item): when a transaction on it next commits, every process's listenAcross(topic) runs.
 * A no-op without a transport (this process's own loops are woken by the commit, lib/poller.ts).
 * A transaction that rolls back leaves the mark to the next commit: one wake-up too many, harmless.
 */
export function workAdded(dataSource: DataSource, topic: string): void {
  if (!transport) return;
  let topics = added.get(dataSource);
  if (!topics) {
    const mine = (topics = new Set());
    added.set(dataSource, mine);
    onCommit(dataSource, () => {
      if (!mine.size) return;
      const told = [...mine];
      mine.clear();
      for (const t of told) notifyAcross(t);
    });
  }
  topics.add(topic);
}

/** A topic named after a module database (one queue per database): `<prefix>.<database>`. */
export function databaseTopic(prefix: string, dataSource: DataSource): string {
  const db = String(dataSource.options.database ?? 'default');
  return `${prefix}.${db.replace(/^.*[\\/]/, '').replace(/[^A-Za-z0-9_-]/g, '_') || 'default'}`;
}
