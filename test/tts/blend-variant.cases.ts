// Blended eSpeak NG variants: numeric settings are weighted averages (with the engine's
// defaults for parts that do not set them); the rest come from the heaviest part.
import { blendVariantFiles } from '../../subgraphs/tts/engine/blend';

const F3 =
  'name female3\ngender female\npitch 140 240\nformant 0 105 80 150\nformant 1 120 75 150 -50\nbreath 0 2 3 3 3 3 3 2\necho 120 10\nroughness 4\n';
const M3 =
  'name male3\ngender male\n// a comment\npitch 80 122\nformant 0 100 100 100\nconsonants 100\nstressAdd 10 10 0 0 0 0 -30 -30\n';

const lines = (text: string) =>
  new Map(
    text
      .trim()
      .split('\n')
      .map((l) => [
        l
          .split(' ')
          .slice(0, l.startsWith('formant') ? 2 : 1)
          .join(' '),
        l,
      ]),
  );

describe('blendVariantFiles', () => {
  it('averages numeric settings by weight, with engine defaults for parts that lack them', () => {
    const blend = lines(
      blendVariantFiles('blend-x', [
        { text: F3, weight: 2 },
        { text: M3, weight: 1 },
      ]),
    );
    expect(blend.get('name')).toBe('name blend-x');
    expect(blend.get('pitch')).toBe('pitch 120 201'); // (2·140 + 80)/3, (2·240 + 122)/3
    expect(blend.get('formant 0')).toBe('formant 0 103 87 133 0');
    expect(blend.get('formant 1')).toBe('formant 1 113 83 133 -33'); // m3 has the default 100 100 100 0
    expect(blend.get('echo')).toBe('echo 80 7'); // m3: no echo
    expect(blend.get('roughness')).toBe('roughness 3'); // (2·4 + 2)/3
    expect(blend.get('consonants')).toBe('consonants 93 100'); // f3: the default 90 100
    expect(blend.get('breath')).toBe('breath 0 1 2 2 2 2 2 1');
  });

  it('takes settings that are not quantities from the heaviest part that has them', () => {
    const blend = lines(
      blendVariantFiles('b', [
        { text: F3, weight: 1 },
        { text: M3, weight: 3 },
      ]),
    );
    expect(blend.get('gender')).toBe('gender male');
    expect(blend.get('stressAdd')).toBe('stressAdd 10 10 0 0 0 0 -30 -30');
    expect(
      lines(
        blendVariantFiles('b', [
          { text: F3, weight: 3 },
          { text: M3, weight: 1 },
        ]),
      ).get('gender'),
    ).toBe('gender female');
  });

  it('gives a part alone its own settings back', () => {
    const alone = lines(blendVariantFiles('b', [{ text: F3, weight: 5 }]));
    expect(alone.get('pitch')).toBe('pitch 140 240');
    expect(alone.get('formant 0')).toBe('formant 0 105 80 150 0');
  });
});
