// POST /bench/baseline/voices and DELETE /bench/baseline/voices/:id?version=N: the same voice
// writes as the facade → gateway → tts subgraph path (token and revocation check, catalog
// check, row and outbox event in one transaction), minus GraphQL.
import express, { Express } from 'express';
import type { ServerInternals } from '../../bin/all-in-one';
import { loadConfig } from '../../lib/config';
import { AppError, ERROR_STATUS } from '../../lib/errors';
import { TokenVerifier } from '../../lib/tokens';
import { EspeakEngine } from '../../subgraphs/tts/engine/espeak';
import { VoiceService } from '../../subgraphs/tts/voice-service';

export function mountTtsBaseline(app: Express, { subgraphs, keys, log }: ServerInternals): void {
  const tts = subgraphs.find((s) => s.name === 'tts')!;
  const voices = new VoiceService(tts.dataSource, new EspeakEngine());
  const verifier = new TokenVerifier(keys, loadConfig().JWT_ISSUER);
  /** The token, and the revocation lookup every subgraph but auth makes. */
  const caller = async (req: express.Request) => {
    const principal = await verifier.verifyRequest(req);
    if (await log.sessionRevoked(principal.sessionId)) throw new AppError('unauthorized');
    return principal;
  };
  const fail = (res: express.Response, err: unknown) => {
    const code = err instanceof AppError ? err.code : 'internal_error';
    res.status(ERROR_STATUS[code]).json({ error: code, message: (err as Error).message });
  };
  app.post('/bench/baseline/voices', express.json(), async (req, res) => {
    try {
      const principal = await caller(req);
      const voice = await voices.create(principal.userId, { name: req.body.name, baseVoice: req.body.base_voice });
      res.status(202).location(`/api/v1/tts/voices/${voice.id}`).json({ id: voice.id, message: 'Voice created.' });
    } catch (err) {
      fail(res, err);
    }
  });
  app.delete('/bench/baseline/voices/:id', async (req, res) => {
    try {
      const principal = await caller(req);
      await voices.delete(principal.userId, req.params.id, Number(req.query.version));
      res
        .status(202)
        .location(`/api/v1/tts/voices/${req.params.id}`)
        .json({ id: req.params.id, message: 'Voice deleted.' });
    } catch (err) {
      fail(res, err);
    }
  });
}
