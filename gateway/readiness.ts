// The gateway's readiness: the subgraphs' own reports, gathered and merged into one.
import type { Checks, CheckState, ReadinessReport } from '../lib/http-app';
import type { SubgraphEndpoint } from './supergraph-source';

async function remoteReadiness(url: string): Promise<ReadinessReport> {
  try {
    const res = await fetch(new URL('/health/ready', url), { signal: AbortSignal.timeout(2000) });
    const body = (await res.json().catch(() => ({}))) as Partial<ReadinessReport>;
    if (!res.ok) return { checks: { database: 'down' } };
    return { checks: { database: 'up', ...(body.checks ?? {}) }, details: body.details };
  } catch {
    return { checks: { database: 'down' } };
  }
}

const RANK: Record<CheckState, number> = { up: 0, degraded: 1, down: 2 };

/**
 * A subgraph is `up` when it answers and its database does. The subgraphs' own checks
 * (`synthesis: degraded`, …) are passed on by name, the worst state of any subgraph winning,
 * with their figures: the gateway knows no particular subgraph.
 */
export async function subgraphsReadiness(subgraphs: SubgraphEndpoint[]): Promise<ReadinessReport> {
  const reports = await Promise.all(
    subgraphs.map((s) => ('local' in s ? s.local.readiness() : remoteReadiness(s.url))),
  );
  const checks: Checks = {};
  const details: Record<string, unknown> = {};
  reports.forEach((report, i) => {
    const { database, ...own } = report.checks;
    checks[subgraphs[i].name] = database === 'up' ? 'up' : 'down';
    for (const [name, state] of Object.entries(own))
      if (!checks[name] || RANK[state] > RANK[checks[name]]) checks[name] = state;
    Object.assign(details, report.details);
  });
  const database: CheckState = subgraphs.every((s) => checks[s.name] === 'up') ? 'up' : 'down';
  return { checks: { database, ...checks }, ...(Object.keys(details).length ? { details } : {}) };
}
