// Vault rules' url_matches globs (subgraphs/vault/url-glob.ts; issue 41, finding 1): the
// automaton agrees with picomatch on the globs users write, refuses what it does not take, and
// matches in steps that grow linearly with the URL on globs that make picomatch's backtracking
// regular expressions run for seconds. Steps are counted, not timed.
import picomatch from 'picomatch';
import { compileGlob, globProblem, MatchCounter } from '../../subgraphs/vault/url-glob';

const picomatchOf = (glob: string) => picomatch(glob, { nocase: true, dot: true });

/** Steps to match `input` with a freshly compiled glob (no transitions learnt yet). */
function steps(glob: string, input: string): number {
  const counter: MatchCounter = { steps: 0 };
  compileGlob(glob).match(input, counter);
  return counter.steps;
}

describe('url_matches globs', () => {
  it('matches as picomatch does on the globs users write', () => {
    const cases: [string, string, boolean][] = [
      ['https://example.com/docs/**', 'https://example.com/docs/a/b/c', true],
      ['https://example.com/docs/**', 'https://example.com/docs', true],
      ['https://example.com/docs/**', 'https://example.com/blog/x', false],
      ['https://example.com/docs/*', 'https://example.com/docs/page', true],
      ['https://example.com/docs/*', 'https://example.com/docs/a/b', false],
      ['https://example.com/docs/*', 'https://example.com/docs/page/', true],
      ['https://example.com/docs/*', 'https://example.com/docs/', false],
      ['**/*.pdf', 'https://example.com/papers/x.PDF', true],
      ['**/*.pdf', 'https://example.com/papers/x.pdfx', false],
      ['https://*.example.com/**', 'https://www.example.com/a', true],
      ['https://*.example.com/**', 'https://www.other.com/a', false],
      ['https://{www,docs}.example.com/*', 'https://docs.example.com/x', true],
      ['https://{www,docs}.example.com/*', 'https://api.example.com/x', false],
      ['https://example.com/item/[0-9][0-9]', 'https://example.com/item/42', true],
      ['https://example.com/item/[0-9][0-9]', 'https://example.com/item/4a', false],
      ['https://example.com/?', 'https://example.com/a', true],
      ['https://example.com/?', 'https://example.com/ab', false],
      ['https://example.com/a\\*b', 'https://example.com/a*b', true],
      ['https://example.com/a\\*b', 'https://example.com/axb', false],
      ['!**/*.pdf', 'https://example.com/x.html', true],
      ['!**/*.pdf', 'https://example.com/x.pdf', false],
      ['HTTPS://EXAMPLE.COM/**', 'https://example.com/x', true],
      ['https://example.com/x/**/y', 'https://example.com/x/y', true],
      ['https://example.com/x/**/y', 'https://example.com/x/1/2/y', true],
      ['https://example.com/[[:alpha:]]*', 'https://example.com/abc', true],
      ['https://example.com/[!a]*', 'https://example.com/abc', false],
      ['https://example.com/[^a]*', 'https://example.com/bcd', true],
      ['https://example.com/a+b$c|d.e', 'https://example.com/a+b$c|d.e', true],
    ];
    for (const [glob, url, expected] of cases) {
      expect({ glob, url, matches: compileGlob(glob).match(url) }).toEqual({ glob, url, matches: expected });
      // picomatch reads `[!a]` as a class of '!' and 'a' (and '[!a]' literally): the one listed
      // case where the automaton takes the shell's meaning instead.
      if (!glob.includes('[!'))
        expect({ glob, url, picomatch: picomatchOf(glob)(url) }).toEqual({ glob, url, picomatch: expected });
    }
  });

  it('agrees with picomatch on random globs over a small alphabet', () => {
    // Segments of literals, '*', '?', classes and braces, or '**' alone. Left out are picomatch's
    // quirks the automaton does not copy (docs/vault.md): a '*' segment before '/**', a '/**/'
    // that also matches the end, and inputs with '//' or a trailing '/'.
    const atoms = [
      'a',
      'b',
      'A',
      ':',
      '*',
      '?',
      'a[ab]',
      'b[a-b]',
      'a[^b]',
      '{a,b}',
      '{a,*}',
      '{ab,b/a}',
      '*a*',
      'a?b',
    ];
    const letters = ['a', 'b', '/', 'A', ':'];
    let seed = 11;
    const random = (n: number) => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) % n;
    };
    let compared = 0;
    const disagreements: string[] = [];
    for (let i = 0; i < 3_000; i++) {
      const segments: string[] = [];
      for (let k = 0, count = 1 + random(4); k < count; k++) {
        if (random(4) === 0) segments.push('**');
        else segments.push(Array.from({ length: 1 + random(3) }, () => atoms[random(atoms.length)]).join(''));
      }
      const glob = (random(10) === 0 ? '!' : '') + segments.join('/');
      if (/\*\*\*|\*\*\/\*\*|[^/]\*\*|\*\*[^/]|\*\/\*\*|[*}]\/\*\*\/|\/\*\*\/\{a,\*\}/.test(glob.replace(/^!/, '')))
        continue;
      const theirs = picomatchOf(glob);
      const ours = compileGlob(glob);
      for (let k = 0; k < 30; k++) {
        const input = Array.from({ length: 1 + random(9) }, () => letters[random(letters.length)]).join('');
        if (input.includes('//') || input.endsWith('/')) continue;
        compared++;
        if (theirs(input) !== ours.match(input)) disagreements.push(`${glob} ${input}`);
      }
    }
    expect(compared).toBeGreaterThan(40_000);
    expect(disagreements).toEqual([]);
  });

  it('refuses parentheses, extglobs, brace ranges and unclosed braces, naming the problem', () => {
    for (const glob of [
      'https://x/(a|b)',
      'https://x/+(a|b)',
      'https://x/@(a)',
      '!(a)',
      'https://x/{1..9}',
      'https://x/{a,b',
      '\\',
    ])
      expect({ glob, problem: globProblem(glob) }).toEqual({ glob, problem: expect.any(String) });
    expect(globProblem('https://x/{1..9}')).toMatch(/\{1,2,3\}/);
    expect(globProblem('https://x/\\(a\\)')).toBeNull();
    expect(compileGlob('https://x/\\(a\\)').match('https://x/(a)')).toBe(true);
  });

  it('matches in steps linear in the URL on backtracking-prone globs', () => {
    const corpus = [
      '**/*a*a*a*a*a*a*a*a*b',
      `**/${'*a'.repeat(12)}*b`,
      '*?*?*?*?*?*?*?*?*?*?b',
      '**/**/**/**/a*a*a*a*a*?*?*?*?b',
      `{${Array.from({ length: 20 }, (_, i) => `*${'a'.repeat(i)}*`).join(',')}}b`,
      `**/${'[a-z]*'.repeat(20)}b`,
      `**/*{a,aa,aaa}*{a,aa,aaa}*{a,aa,aaa}*{a,aa,aaa}*b`,
    ];
    for (const glob of corpus) {
      const size = compileGlob(glob).size;
      const at = (n: number) => steps(glob, `http://h/${'a'.repeat(n)}`);
      const s48 = at(48);
      const s480 = at(480);
      const s2040 = at(2_040);
      // Bounded by (input length + 1) × states, and growing no faster than the input.
      expect({ glob, bounded: s2040 <= 2_050 * size }).toEqual({ glob, bounded: true });
      expect({ glob, ratio: s2040 / s480 < (2_049 / 489) * 1.1 }).toEqual({ glob, ratio: true });
      expect({ glob, ratio: s480 / s48 < (489 / 57) * 1.1 }).toEqual({ glob, ratio: true });
      for (const url of ['http://h/aaaaaaaaaab', 'http://h/aaaaaaaaaa', 'aaaaaaaaab'])
        expect({ glob, url, matches: compileGlob(glob).match(url) }).toEqual({
          glob,
          url,
          matches: picomatchOf(glob)(url),
        });
    }
    // The 2,048-character URL against its glob: a few steps per character once the
    // automaton has learnt its transitions.
    const matcher = compileGlob('**/*a*a*a*a*a*a*a*a*b');
    const url = `http://h/${'a'.repeat(2_039)}`;
    expect(url).toHaveLength(2_048);
    matcher.match(url);
    const counter: MatchCounter = { steps: 0 };
    expect(matcher.match(url, counter)).toBe(false);
    expect(counter.steps).toBeLessThanOrEqual(url.length);
  });
});
