// The arguments of the hubs operations, with their rules (class-validator): the value rules
// of hub-rules.ts, checked before a resolver runs (`validation_error` with details).
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, IsUUID, Matches, Max, MaxLength, Min } from 'class-validator';
import { GraphQLJSONObject } from 'graphql-scalars';
import { ArgsType, Field, ID, Int } from 'type-graphql';
import { TrimmedLength } from '../../../lib/validators';
import {
  COLOR_PATTERN,
  DESCRIPTION_MAX,
  DIRECTIONS,
  ENDS,
  LABEL_MAX,
  NAME_MAX,
  NAME_MIN,
  NEIGHBOR_DEPTH_MAX,
  NODE_TYPES,
  SIDES,
  SIZE_MAX,
  SIZE_MIN,
  URL_MAX,
} from '../hub-rules';
import type { Direction } from '../neighbors';

const COLOR = 'must be "1" to "6" or #RRGGBB';
const NAME = `${NAME_MIN} to ${NAME_MAX} characters, trimmed.`;
const DESCRIPTION = `At most ${DESCRIPTION_MAX.toLocaleString('en-US')} characters.`;

@ArgsType()
export class CreateHubArgs {
  @Field({ description: NAME })
  @TrimmedLength(NAME_MIN, NAME_MAX)
  name!: string;

  @Field(() => String, { nullable: true, description: DESCRIPTION })
  @IsOptional()
  @MaxLength(DESCRIPTION_MAX)
  description?: string | null;
}

@ArgsType()
export class UpdateHubArgs {
  @Field(() => String, { nullable: true, description: 'Left out: unchanged.' })
  @IsOptional()
  @TrimmedLength(NAME_MIN, NAME_MAX)
  name?: string | null;

  @Field(() => String, { nullable: true, description: 'Left out: unchanged; null: cleared.' })
  @IsOptional()
  @MaxLength(DESCRIPTION_MAX)
  description?: string | null;
}

@ArgsType()
export class ImportHubArgs extends CreateHubArgs {
  @Field(() => GraphQLJSONObject, { description: 'A JSON Canvas 1.0 document.' })
  canvas!: Record<string, unknown>;
}

@ArgsType()
export class HubIdArgs {
  @Field(() => ID)
  @IsUUID()
  hubId!: string;
}

@ArgsType()
export class NodeIdArgs extends HubIdArgs {
  @Field(() => ID)
  @IsUUID()
  nodeId!: string;
}

@ArgsType()
export class VersionedNodeArgs extends NodeIdArgs {
  @Field(() => Int, { description: 'The version the caller expects the node to have; another is `conflict`.' })
  @IsInt()
  @Min(1)
  version!: number;
}

@ArgsType()
export class EdgeIdArgs extends HubIdArgs {
  @Field(() => ID)
  @IsUUID()
  edgeId!: string;
}

/** Layout and looks, shared by a new node and a node's changes. */
@ArgsType()
export class NodeLookArgs {
  @Field(() => String, { nullable: true, description: `"1" to "6" (canvas presets) or #RRGGBB; null: none.` })
  @IsOptional()
  @Matches(COLOR_PATTERN, { message: COLOR })
  color?: string | null;

  @Field(() => String, { nullable: true, description: `At most ${LABEL_MAX} characters; null: none.` })
  @IsOptional()
  @MaxLength(LABEL_MAX)
  label?: string | null;

  @Field(() => String, { nullable: true, description: 'Markdown, of a text node (HUB_NODE_TEXT_MAX_CHARS).' })
  @IsOptional()
  @IsString()
  text?: string | null;

  @Field(() => String, { nullable: true, description: 'An http(s) URL, of a link node.' })
  @IsOptional()
  @MaxLength(URL_MAX)
  url?: string | null;

  @Field(() => ID, { nullable: true, description: 'One of your notes, vault items or voices, of a ref node.' })
  @IsOptional()
  @IsUUID()
  refId?: string | null;
}

@ArgsType()
export class AddNodeArgs extends NodeLookArgs {
  @Field({ description: NODE_TYPES.join(' | ') })
  @IsIn(NODE_TYPES)
  type!: string;

  @Field(() => Int) x!: number;
  @Field(() => Int) y!: number;

  @Field(() => Int, { description: `${SIZE_MIN} to ${SIZE_MAX}.` })
  @Min(SIZE_MIN)
  @Max(SIZE_MAX)
  width!: number;

  @Field(() => Int, { description: `${SIZE_MIN} to ${SIZE_MAX}.` })
  @Min(SIZE_MIN)
  @Max(SIZE_MAX)
  height!: number;
}

@ArgsType()
export class NodeChangesArgs extends NodeLookArgs {
  @Field(() => Int, { nullable: true })
  @IsOptional()
  @IsInt()
  x?: number | null;

  @Field(() => Int, { nullable: true })
  @IsOptional()
  @IsInt()
  y?: number | null;

  @Field(() => Int, { nullable: true, description: `${SIZE_MIN} to ${SIZE_MAX}.` })
  @IsOptional()
  @Min(SIZE_MIN)
  @Max(SIZE_MAX)
  width?: number | null;

  @Field(() => Int, { nullable: true, description: `${SIZE_MIN} to ${SIZE_MAX}.` })
  @IsOptional()
  @Min(SIZE_MIN)
  @Max(SIZE_MAX)
  height?: number | null;
}

@ArgsType()
export class AddEdgeArgs {
  @Field(() => ID) @IsUUID() fromNode!: string;
  @Field(() => ID) @IsUUID() toNode!: string;

  @Field(() => String, { nullable: true, description: SIDES.join(' | ') })
  @IsOptional()
  @IsIn(SIDES)
  fromSide?: string | null;

  @Field(() => String, { nullable: true, description: SIDES.join(' | ') })
  @IsOptional()
  @IsIn(SIDES)
  toSide?: string | null;

  @Field(() => String, { nullable: true, description: ENDS.join(' | ') })
  @IsOptional()
  @IsIn(ENDS)
  fromEnd?: string | null;

  @Field(() => String, { nullable: true, description: ENDS.join(' | ') })
  @IsOptional()
  @IsIn(ENDS)
  toEnd?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @MaxLength(LABEL_MAX)
  label?: string | null;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Matches(COLOR_PATTERN, { message: COLOR })
  color?: string | null;
}

@ArgsType()
export class QuickAddArgs {
  @Field(() => String, { nullable: true, description: 'A text node: give text or url.' })
  @IsOptional()
  @IsString()
  text?: string | null;

  @Field(() => String, { nullable: true, description: 'A link node: give text or url.' })
  @IsOptional()
  @MaxLength(URL_MAX)
  url?: string | null;

  @Field(() => ID, { nullable: true, description: 'Placed right of this node, with an edge from it.' })
  @IsOptional()
  @IsUUID()
  nearNodeId?: string | null;

  @Field(() => Boolean, {
    nullable: true,
    description: 'Also capture it into the Vault; the node then becomes a vault_item node.',
  })
  @IsOptional()
  @IsBoolean()
  capture?: boolean | null;
}

@ArgsType()
export class NeighborsArgs {
  @Field(() => Int, { defaultValue: 1, description: `1 to ${NEIGHBOR_DEPTH_MAX}.` })
  @Min(1)
  @Max(NEIGHBOR_DEPTH_MAX)
  depth!: number;

  @Field(() => String, { defaultValue: 'both', description: `${DIRECTIONS.join(' | ')}.` })
  @IsIn(DIRECTIONS)
  direction!: Direction;
}
