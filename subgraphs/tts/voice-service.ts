// The TTS module's voice rules: a voice belongs to its owner, is checked against the speech
// engine's catalog, and is deleted only at the version the caller names.
import { v7 as uuidv7 } from 'uuid';
import type { DataSource } from 'typeorm';
import { affectedRows, isUniqueViolation } from '../../lib/database/portable';
import { inTransaction } from '../../lib/database/transactions';
import { AppError, validationError } from '../../lib/errors';
import { UserCaps } from '../../lib/kit/user-caps';
import { lostAtVersion, staleVersion } from '../../lib/kit/versioned';
import { snakeKeys } from '../../lib/naming';
import { publish } from '../../lib/kit/typed-events';
import { VoiceCreated, VoiceDeleted, VoiceUpdated, type VoicePayload } from './events';
import { Page, pageOf, PageOrder } from '../../lib/paging';
import type { SpeechEngine } from './engine/speech-engine';
import { Voice } from './entities/voice';
import { checkVoiceSettings, VoiceSettingsInput } from './voice-settings';

export interface NewVoice extends VoiceSettingsInput {
  name: string;
  description?: string | null;
}

/** What an update may change; a field left undefined stays as it is, null clears it. */
export interface VoiceChanges {
  name?: string;
  description?: string | null;
  baseVoice?: string;
  voiceBlend?: string | null;
  language?: string;
  speed?: number;
}

/** The stored fields of a voice an update may change. */
const CHANGEABLE = [
  'name',
  'description',
  'baseVoice',
  'voiceBlend',
  'language',
  'speed',
] as const satisfies readonly (keyof VoiceChanges)[];

/** The fields an event carries: what a stream reader needs to show the voice (spelled as events spell them: lib/naming.ts). */
export const voiceEventData = (v: Voice): VoicePayload =>
  snakeKeys<unknown>({
    voiceId: v.id,
    name: v.name,
    baseVoice: v.baseVoice,
    voiceBlend: v.voiceBlend,
    language: v.language,
    speed: v.speed,
    version: v.version,
  }) as VoicePayload;

/** The counter of VOICES_PER_USER (lib/kit/user-caps.ts). */
export const VOICES_CAP = 'VOICES_PER_USER';

/** Voices oldest first: their ids are UUIDv7, in creation order. */
const VOICE_ORDER: PageOrder<Voice> = { keys: [{ property: 'id', kind: 'uuid' }], direction: 'ASC' };

export class VoiceService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly engine: SpeechEngine,
    /** VOICES_PER_USER: the voices one owner may keep. */
    private readonly options: { voicesPerUser?: number } = {},
  ) {
    this.caps = new UserCaps(dataSource);
  }

  private readonly caps: UserCaps;

  async create(ownerId: string, input: NewVoice): Promise<Voice> {
    const settings = await checkVoiceSettings(this.engine, input);
    const now = new Date();
    const name = input.name.trim();
    const voice = this.dataSource.manager.create(Voice, {
      id: uuidv7(),
      ownerId,
      name,
      nameKey: name.toLowerCase(),
      description: input.description ?? null,
      ...settings,
      version: 1,
      createdAt: now,
      updatedAt: now,
    });
    const cap = {
      limit: VOICES_CAP,
      max: this.options.voicesPerUser ?? Number.MAX_SAFE_INTEGER,
      what: 'You have the most voices allowed; delete some to make more.',
    };
    await this.caps.prepare(ownerId, [cap.limit]);
    try {
      return await inTransaction(this.dataSource, async (m) => {
        await this.caps.take(m, ownerId, { cap });
        await m.insert(Voice, voice);
        await publish(m, VoiceCreated, {
          userId: ownerId,
          resourceId: voice.id,
          data: voiceEventData(voice),
        });
        return voice;
      });
    } catch (err) {
      if (isUniqueViolation(err))
        throw new AppError('conflict', 'You have a voice with this name already.', {
          name: ['is taken by another of your voices'],
        });
      throw err;
    }
  }

  /** Another user's voice is `not_found`, exactly like an unknown id. */
  async get(ownerId: string, id: string): Promise<Voice> {
    const voice = await this.dataSource.manager.findOneBy(Voice, { id, ownerId });
    if (!voice) throw new AppError('not_found', 'No such voice.');
    return voice;
  }

  /** The owner's voices in creation order, `limit` at a time after the cursor. */
  list(ownerId: string, limit: number, cursor?: string | null): Promise<Page<Voice>> {
    return pageOf(
      this.dataSource.manager.createQueryBuilder(Voice, 'v').where('v.ownerId = :ownerId', { ownerId }),
      VOICE_ORDER,
      limit,
      cursor,
    );
  }

  /**
   * Optimistic locking like delete: the statement checks the version (`UPDATE … WHERE id AND
   * owner AND version`), so of concurrent updates at one version exactly one changes the row.
   * The changed fields are checked with create's rules, the settings as a whole against the
   * catalog. The version goes up by one even when nothing differs (the command was accepted).
   */
  async update(ownerId: string, id: string, version: number, changes: VoiceChanges): Promise<Voice> {
    const given = CHANGEABLE.filter((k) => changes[k] !== undefined);
    if (!given.length) throw validationError({ body: [`give at least one of ${CHANGEABLE.join(', ')}`] });
    const problems: Record<string, string[]> = {};
    for (const k of ['name', 'baseVoice', 'language', 'speed'] as const)
      if (changes[k] === null) problems[k] = ['cannot be cleared (null)'];
    if (Object.keys(problems).length) throw validationError(problems);

    const voice = await this.get(ownerId, id);
    if (voice.version !== version) throw staleVersion('voice', voice.version, version);
    const settings = await checkVoiceSettings(this.engine, {
      baseVoice: changes.baseVoice ?? voice.baseVoice,
      voiceBlend: changes.voiceBlend !== undefined ? changes.voiceBlend : voice.voiceBlend,
      language: changes.language ?? voice.language,
      speed: changes.speed ?? voice.speed,
    });
    const name = changes.name !== undefined ? changes.name.trim() : voice.name;
    const next: Partial<Voice> = {
      name,
      nameKey: name.toLowerCase(),
      description: changes.description !== undefined ? changes.description : voice.description,
      ...settings,
      version: version + 1,
      updatedAt: new Date(),
    };
    const changed: Record<string, unknown> = {};
    const previous: Record<string, unknown> = {};
    for (const field of CHANGEABLE) {
      if (next[field] !== voice[field]) {
        changed[field] = next[field];
        previous[field] = voice[field];
      }
    }
    const updated = { ...voice, ...next };
    let won: boolean;
    try {
      won = await inTransaction(this.dataSource, async (m) => {
        const result = await m.update(Voice, { id, ownerId, version }, next);
        if (affectedRows(result) !== 1) return false;
        await publish(m, VoiceUpdated, {
          userId: ownerId,
          resourceId: id,
          data: { ...voiceEventData(updated), changed: snakeKeys(changed), previous: snakeKeys(previous) },
        });
        return true;
      });
    } catch (err) {
      if (isUniqueViolation(err))
        throw new AppError('conflict', 'You have a voice with this name already.', {
          name: ['is taken by another of your voices'],
        });
      throw err;
    }
    if (won) return updated;
    return lostAtVersion('voice', version, () => this.dataSource.manager.findOneBy(Voice, { id, ownerId }));
  }

  /**
   * Optimistic locking: the delete names the version, and the statement itself checks it
   * (`… WHERE id AND owner AND version`), so of concurrent deletes exactly one affects the row.
   */
  async delete(ownerId: string, id: string, version: number): Promise<Voice> {
    const voice = await this.get(ownerId, id);
    const won =
      voice.version === version &&
      (await inTransaction(this.dataSource, async (m) => {
        const result = await m.delete(Voice, { id, ownerId, version });
        if (affectedRows(result) !== 1) return false;
        await this.caps.release(m, ownerId, VOICES_CAP);
        await publish(m, VoiceDeleted, { userId: ownerId, resourceId: id, data: voiceEventData(voice) });
        return true;
      }));
    if (won) return voice;
    // Lost: either the version was stale, or another delete got there first.
    return lostAtVersion('voice', version, () => this.dataSource.manager.findOneBy(Voice, { id, ownerId }));
  }
}
