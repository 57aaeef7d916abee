// A user's classification rules (classifier.ts runs them, in priority order): checked, capped
// (VAULT_RULES_PER_USER), changed at the expected version, each change's event in its transaction.
import { v7 as uuidv7 } from 'uuid';
import type { DataSource, EntityManager } from 'typeorm';
import { affectedRows } from '../../lib/database/portable';
import { inTransaction } from '../../lib/database/transactions';
import { AppError, validationError } from '../../lib/errors';
import { publish } from '../../lib/kit/typed-events';
import { lostAtVersion, staleVersion, updateAtVersion } from '../../lib/kit/versioned';
import { VaultRule, VaultRuleThen, VaultRuleWhen } from './entities/vault-rule';
import { VaultRuleCreated, VaultRuleDeleted, VaultRuleUpdated } from './events';
import { chars, normaliseTags } from './item-fields';
import type { VaultCaps } from './limits';
import { globProblem } from './url-glob';

export interface RuleInput {
  name?: string;
  priority?: number;
  when?: VaultRuleWhen;
  then?: VaultRuleThen;
}

function checkRule(input: RuleInput, partial: boolean): void {
  const problems: Record<string, string[]> = {};
  if (input.name !== undefined && !(chars(input.name.trim()) >= 1 && chars(input.name.trim()) <= 100))
    problems.name = ['must be 1 to 100 characters'];
  if (input.priority !== undefined && !(Number.isInteger(input.priority) && Math.abs(input.priority) <= 1_000_000))
    problems.priority = ['must be an integer from -1000000 to 1000000'];
  const w = input.when;
  if (w) {
    if (w.urlHost != null && !/^[a-z0-9.-]{1,253}$/i.test(w.urlHost))
      problems['when.url_host'] = ['must be a host name'];
    if (w.urlMatches != null && !(chars(w.urlMatches) >= 1 && chars(w.urlMatches) <= 500))
      problems['when.url_matches'] = ['must be a glob of 1 to 500 characters'];
    else if (w.urlMatches != null) {
      const problem = globProblem(w.urlMatches);
      if (problem) problems['when.url_matches'] = [problem];
    }
    if (
      w.textContains != null &&
      (w.textContains.length > 20 || w.textContains.some((t) => !t.trim() || chars(t) > 200))
    )
      problems['when.text_contains'] = ['at most 20 strings of 1 to 200 characters'];
    if (w.mediaType != null && !/^[\w.+-]+\/([\w.+-]+|\*)$/.test(w.mediaType))
      problems['when.media_type'] = ['must be a media type or a family such as image/*'];
  } else if (!partial) problems.when = ['is required'];
  const t = input.then;
  if (t) {
    if (t.category != null && !(chars(t.category.trim()) >= 1 && chars(t.category.trim()) <= 100))
      problems['then.category'] = ['must be 1 to 100 characters'];
    if (t.tags != null)
      try {
        t.tags = normaliseTags(t.tags, 'then.tags');
      } catch (err) {
        Object.assign(problems, ((err as AppError).details ?? {}) as Record<string, string[]>);
      }
  } else if (!partial) problems.then = ['is required'];
  if (Object.keys(problems).length) throw validationError(problems);
}

/** A condition or an action without its unset fields, as stored. */
const clean = <T extends object>(value: T | undefined): T | undefined =>
  value && (Object.fromEntries(Object.entries(value).filter(([, v]) => v != null)) as T);

export class VaultRules {
  constructor(
    private readonly dataSource: DataSource,
    private readonly caps: VaultCaps,
  ) {}

  /** The owner's rules in the order they run (also read by the enrichment worker). */
  rulesOf(ownerId: string, m: EntityManager = this.dataSource.manager): Promise<VaultRule[]> {
    return m.find(VaultRule, { where: { ownerId }, order: { priority: 'ASC', id: 'ASC' } });
  }

  async create(
    ownerId: string,
    input: Required<Pick<RuleInput, 'name' | 'when' | 'then'>> & RuleInput,
  ): Promise<VaultRule> {
    checkRule(input, false);
    const { caps, cap } = this.caps;
    await caps.prepare(ownerId, [cap.rules.limit]);
    return inTransaction(this.dataSource, async (m) => {
      await caps.take(m, ownerId, { cap: cap.rules });
      const now = new Date();
      const rule = m.create(VaultRule, {
        id: uuidv7(),
        ownerId,
        name: input.name.trim(),
        priority: input.priority ?? 100,
        when: clean(input.when)!,
        then: clean(input.then)!,
        version: 1,
        createdAt: now,
        updatedAt: now,
      });
      await m.insert(VaultRule, rule);
      await publish(m, VaultRuleCreated, {
        userId: ownerId,
        resourceId: rule.id,
        data: { rule_id: rule.id, name: rule.name },
      });
      return rule;
    });
  }

  async get(ownerId: string, id: string): Promise<VaultRule> {
    const rule = await this.dataSource.manager.findOneBy(VaultRule, { id, ownerId });
    if (!rule) throw new AppError('not_found', 'No such rule.');
    return rule;
  }

  async update(ownerId: string, id: string, version: number, input: RuleInput): Promise<VaultRule> {
    checkRule(input, true);
    const rule = await this.get(ownerId, id);
    if (rule.version !== version) throw staleVersion('rule', rule.version, version);
    const set: Partial<VaultRule> = {};
    if (input.name !== undefined) set.name = input.name.trim();
    if (input.priority !== undefined) set.priority = input.priority;
    if (input.when) set.when = clean(input.when);
    if (input.then) set.then = clean(input.then);
    return inTransaction(this.dataSource, async (m) => {
      if (!(await updateAtVersion(m, VaultRule, { id, ownerId }, version, { ...set, updatedAt: new Date() })))
        await lostAtVersion('rule', version, () => this.get(ownerId, id));
      const saved = await m.findOneByOrFail(VaultRule, { id });
      await publish(m, VaultRuleUpdated, {
        userId: ownerId,
        resourceId: id,
        data: { rule_id: id, name: saved.name, changed: Object.keys(set) },
      });
      return saved;
    });
  }

  async delete(ownerId: string, id: string, version: number): Promise<VaultRule> {
    const rule = await this.get(ownerId, id);
    return inTransaction(this.dataSource, async (m) => {
      if (rule.version !== version || affectedRows(await m.delete(VaultRule, { id, ownerId, version })) !== 1)
        await lostAtVersion('rule', version, () => this.get(ownerId, id));
      await this.caps.caps.release(m, ownerId, this.caps.cap.rules.limit);
      await publish(m, VaultRuleDeleted, {
        userId: ownerId,
        resourceId: id,
        data: { rule_id: id, name: rule.name },
      });
      return rule;
    });
  }

  list(ownerId: string): Promise<VaultRule[]> {
    return this.rulesOf(ownerId);
  }
}
