// The TTS subgraph: voices on the speech engine's base voices. Owns the `tts` database;
// meets the auth subgraph only through the `owner: User` reference and events.
import { OutboxEvent } from '../../lib/outbox';
import type { SubgraphContext, SubgraphDefinition } from '../../lib/subgraph';
import { EspeakEngine } from './engine/espeak';
import { UserReference } from './entities/user-reference';
import { Voice } from './entities/voice';
import { CreateTtsTables1733000000000 } from './migrations/1733000000000-CreateTtsTables';
import { VoiceResolver } from './resolvers/voice-resolver';
import { VoiceService } from './voice-service';

export const ttsSubgraph: SubgraphDefinition = {
  name: 'tts',
  entities: [Voice, OutboxEvent],
  migrations: [CreateTtsTables1733000000000],
  create({ dataSource }) {
    const engine = new EspeakEngine();
    const voices = new VoiceService(dataSource, engine);
    return {
      resolvers: [new VoiceResolver(voices, engine)],
      orphanedTypes: [UserReference],
      references: {
        // Other subgraphs may point at a voice; only its owner sees it.
        Voice: {
          __resolveReference: (ref: { id: string }, ctx: SubgraphContext) =>
            ctx.principal ? voices.get(ctx.principal.userId, ref.id).catch(() => null) : null,
        },
      },
      stop: () => engine.stop(),
    };
  },
};
