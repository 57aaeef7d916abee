// GET /bench/baseline/session: verify the JWT, read the session row, return it — what the
// facade → gateway → subgraph path does, minus GraphQL.
import type { Express } from 'express';
import type { ServerInternals } from '../../bin/all-in-one';
import { loadConfig } from '../../lib/config';
import { TokenVerifier } from '../../lib/tokens';
import { Session, SessionState } from '../../subgraphs/auth/entities/session';

export function mountAuthBaseline(app: Express, { subgraphs, keys }: ServerInternals): void {
  const auth = subgraphs.find((s) => s.name === 'auth')!;
  const verifier = new TokenVerifier(keys, loadConfig().JWT_ISSUER);
  app.get('/bench/baseline/session', async (req, res) => {
    try {
      const principal = await verifier.verifyRequest(req);
      const s = await auth.dataSource.manager.findOneBy(Session, { id: principal.sessionId });
      if (!s || s.state !== SessionState.active)
        return res.status(401).json({ error: 'unauthorized', message: 'no session' });
      res.json({
        session_id: s.id,
        user_id: s.userId,
        expires_at: s.expiresAt,
        created_at: s.createdAt,
        last_activity_at: s.lastActivityAt,
        state: s.state,
      });
    } catch {
      res.status(401).json({ error: 'unauthorized', message: 'bad token' });
    }
  });
}
