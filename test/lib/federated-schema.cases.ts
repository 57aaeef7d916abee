// buildFederatedSchema (lib/subgraph.ts): a default value of an enum argument or input field reaches
// the resolver as the enum's TypeScript value, as an explicit value does. Apollo's buildSubgraphSchema
// read defaults before it mapped the enums' values, so `synthesisAudio(id)` once asked the service
// for the format 'WAV' instead of 'wav' (an audio of no size, an encoding that never came).
import { execute, parse } from 'graphql';
import { Arg, Args, ArgsType, Field, InputType, Query, registerEnumType, Resolver } from 'type-graphql';
import { buildFederatedSchema } from '../../lib/subgraph';

enum Shade {
  LIGHT = 'light-value',
  DARK = 'dark-value',
}
registerEnumType(Shade, { name: 'Shade' });

@ArgsType()
class ShadeArgs {
  @Field(() => Shade, { defaultValue: Shade.DARK })
  shade!: Shade;
}

@InputType()
class Paint {
  @Field(() => Shade, { defaultValue: Shade.LIGHT })
  shade!: Shade;
  @Field(() => [Shade], { defaultValue: [Shade.DARK, Shade.LIGHT] })
  more!: Shade[];
}

@Resolver()
class ShadeResolver {
  @Query(() => String)
  shade(@Args() { shade }: ShadeArgs): string {
    return shade;
  }

  @Query(() => String)
  paint(@Arg('paint', () => Paint, { defaultValue: {} }) paint: Paint): string {
    return [paint.shade, ...paint.more].join(' ');
  }
}

describe('enum defaults in a federated subgraph schema', () => {
  it("reach resolvers as the enum's values, as explicit values do", async () => {
    const schema = await buildFederatedSchema({ resolvers: [new ShadeResolver()] });
    const run = async (query: string) => {
      const result = await execute({ schema, document: parse(query) });
      expect(result.errors).toBeUndefined();
      return result.data;
    };
    expect(await run('{ shade(shade: DARK) light: shade(shade: LIGHT) }')).toEqual({
      shade: 'dark-value',
      light: 'light-value',
    });
    expect(await run('{ shade }')).toEqual({ shade: 'dark-value' });
    expect(await run('{ paint(paint: {}) }')).toEqual({ paint: 'light-value dark-value light-value' });
    expect(await run('{ paint(paint: { shade: DARK, more: [] }) }')).toEqual({ paint: 'dark-value' });
    expect(await run('{ paint }')).toEqual({ paint: 'light-value dark-value light-value' });
  });
});
