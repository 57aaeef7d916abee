import { Field, Float, Int, ObjectType, Query, Resolver, FieldResolver, Root } from 'type-graphql';
import type { DataSource } from 'typeorm';
import { RequiresScopes } from '../../../lib/scopes';
import { Synthesis, SynthesisState } from '../entities/synthesis';
import { SynthesisHealth, synthesisHealth } from '../worker-heartbeat';

export const NO_WORKER_WARNING =
  'No synthesis worker is running: the job is kept queued and starts when one is back. Check GET /api/v1/tts/status or /health/ready.';

@RequiresScopes('tts:read')
@ObjectType('SynthesisStatus', {
  description: 'Whether speech is being rendered: live workers and how long the queue has waited.',
})
class SynthesisStatusType {
  @Field({ description: '`up` with a live worker; `degraded` with none (jobs stay queued until one starts).' })
  status!: string;
  @Field(() => Int, { description: 'Workers whose heartbeat is recent (SYNTHESIS_HEARTBEAT_SECONDS).' })
  liveWorkers!: number;
  @Field(() => Int, { description: 'Jobs waiting, of every user.' })
  queued!: number;
  @Field(() => Float, {
    nullable: true,
    description: 'Seconds the oldest queued job has waited; null with none queued.',
  })
  oldestQueuedAgeSeconds!: number | null;
}

/** Readiness of synthesis as a query, and the warning a job carries while no worker is alive. */
@Resolver(() => Synthesis)
export class SynthesisStatusResolver {
  constructor(
    private readonly dataSource: DataSource,
    private readonly heartbeatSeconds: number,
  ) {}

  health(): Promise<SynthesisHealth> {
    return synthesisHealth(this.dataSource, this.heartbeatSeconds);
  }

  @RequiresScopes('tts:read')
  @Query(() => SynthesisStatusType, { description: 'Live synthesis workers and the age of the oldest queued job.' })
  synthesisStatus(): Promise<SynthesisStatusType> {
    return this.health();
  }

  @FieldResolver(() => String, {
    nullable: true,
    description: 'Set while the job is queued and no synthesis worker is alive to take it.',
  })
  async warning(@Root() synthesis: Synthesis): Promise<string | null> {
    if (synthesis.state !== SynthesisState.QUEUED) return null;
    return (await this.health()).liveWorkers > 0 ? null : NO_WORKER_WARNING;
  }
}
