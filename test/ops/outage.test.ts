// A database outage under load, on a MariaDB the test starts and stops itself (its own data
// folder and port, never the shared server): requests answer 503 service_unavailable (never 500,
// never 401) within the request timeout, every process's readiness 503; when the database is
// back every process recovers by itself, and no acknowledged voice or its event is lost or
// logged twice. The scenario is bench/outage.ts (also `npm run bench -- ops`).
import { privateMariadbMissing } from '../../bench/mariadb';
import { runOutage } from '../../bench/outage';
import { TEST_DB } from '../helpers/server';

/** The longest a request may take while the database is down (the facade's callers would time out later). */
const REQUEST_TIMEOUT_MS = 10_000;

const missing = privateMariadbMissing();
if (missing && TEST_DB === 'mysql') console.warn(`Skipping the database outage test: ${missing}.`);

// A MySQL test (it needs mariadbd, as CI's MySQL pass has), run once: in the mysql project.
(TEST_DB === 'mysql' && !missing ? describe : describe.skip)('database outage', () => {
  it('answers 503 while MariaDB is stopped, recovers every process when it returns, loses and duplicates nothing', async () => {
    const result = await runOutage({ outageMs: 5000 });
    const during = result.requests.filter((r) => r.phase === 'during');
    expect(during.length).toBeGreaterThan(10);
    // Refused cleanly: never a crash, never "your token is invalid". (A request already past
    // the database when it stopped may still succeed.)
    expect(during.filter((r) => ![200, 202, 503].includes(r.status))).toEqual([]);
    expect(during.filter((r) => r.status === 503).every((r) => r.error === 'service_unavailable')).toBe(true);
    expect(during.filter((r) => r.status === 503).length).toBeGreaterThan(during.length / 2);
    expect(Math.max(...during.map((r) => r.ms))).toBeLessThan(REQUEST_TIMEOUT_MS);
    for (const [name, statuses] of Object.entries(result.readyWhileDown))
      expect({ name, down: statuses.includes(503) }).toEqual({ name, down: true });

    // Every process answers again without a restart.
    expect(Object.keys(result.recoveryMs).sort()).toEqual(Object.keys(result.readyWhileDown).sort());
    const after = result.requests.filter((r) => r.phase === 'after');
    expect(after.some((r) => r.status === 202)).toBe(true);
    expect(after.some((r) => r.status === 200)).toBe(true);
    expect(result.requests.filter((r) => r.status === 500 || r.status === 401)).toEqual([]);

    // Nothing acknowledged lost, nothing logged twice; relays and the stream's poller resumed.
    expect(result.acknowledged.length).toBeGreaterThan(10);
    expect(result.readBack).toBe(result.acknowledged.length);
    expect({ lost: result.lostEvents, duplicated: result.duplicatedEvents, outboxLeft: result.outboxLeft }).toEqual({
      lost: 0,
      duplicated: 0,
      outboxLeft: 0,
    });
    expect(result.streamResumed).toBe(true);
    expect(Object.values(result.exitCodes).every((c) => c === 0)).toBe(true);
    console.log(
      `outage: ${during.length} requests while down (${during.filter((r) => r.status === 503).length} × 503), recovery ms ${JSON.stringify(result.recoveryMs)}`,
    );
  }, 300_000);
});
