import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileDriver, hasGxx, runDriver } from './gxx.js';

const here = path.dirname(fileURLToPath(import.meta.url));

describe.skipIf(!hasGxx)('native/common/json.hpp (needs g++; skipped when absent)', () => {
  let dir = '';
  let binary = '';

  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'topod-json-'));
    binary = compileDriver(path.join(here, 'json-roundtrip.cpp'), dir);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Feeds one line per input to the driver and returns one output line per input (plus the trailing "built" line). */
  const run = (lines: string[]) => runDriver(binary, lines);

  it('round-trips valid documents, printing integral numbers without a fraction', () => {
    const cases: Array<[string, string]> = [
      ['{"id":7,"op":"hello","args":{}}', '{"id":7,"op":"hello","args":{}}'],
      [' [1, 2.5, -3, 1e3, 0.1] ', '[1,2.5,-3,1000,0.1]'],
      ['{"s":"a\\"b\\\\c\\n\\u0001"}', '{"s":"a\\"b\\\\c\\n\\u0001"}'],
      ['"\\u00e9\\ud83d\\ude00"', '"é😀"'],
      ['[true,false,null,{}]', '[true,false,null,{}]'],
      ['{"a":1,"a":2}', '{"a":2}'],
      ['4294967296', '4294967296'],
    ];
    const out = run(cases.map(([input]) => input));
    for (const [i, [input, expected]] of cases.entries()) expect(out[i], input).toBe(expected);
  });

  it('rejects invalid documents with a message and the byte offset', () => {
    const cases: Array<[string, number, RegExp]> = [
      ['{"a":1,}', 7, /expected a string key/],
      ['[01]', 2, /leading zeros/],
      ['[1 2]', 3, /expected ',' or '\]'/],
      ['nul', 0, /invalid literal/],
      ['{"a":1', 6, /unterminated object/],
      ['"abc', 4, /unterminated string/],
      ['"\\x"', 2, /invalid escape/],
      ['1e400', 0, /out of range/],
      ['{} x', 3, /trailing/],
      ['', 0, /unexpected end/],
      ['"\\ud83d"', 7, /unpaired high surrogate/],
      ['NaN', 0, /unexpected character/],
      ['['.repeat(300), 257, /nesting deeper/],
    ];
    const out = run(cases.map(([input]) => input));
    cases.forEach(([input, offset, message], i) => {
      const line = out[i] ?? '';
      expect(line, input).toMatch(new RegExp(`^error ${offset} `));
      expect(line, input).toMatch(message);
    });
  });

  it('reads nested members and reports missing keys as type errors', () => {
    const out = run(['?args.n {"args":{"n":[1,2]}}', '?args.x {"args":{"n":1}}', '?a.b {"a":3}']);
    expect(out[0]).toBe('array [1,2]');
    expect(out[1]).toBe('type-error missing key "x"');
    expect(out[2]).toBe('type-error expected object, got number');
  });

  it('builds objects in insertion order with escaped strings', () => {
    const out = run([]);
    expect(out.at(-2)).toBe('built {"ok":true,"name":"H100 \\"sxm\\"\\n","n":3,"x":0.5,"list":[1,null,-0.00225]}');
  });

  it('writes number lists as the tree would, exact for the widest integers', () => {
    const line = run([]).at(-1) ?? '';
    expect(line).toBe('lists {"cycles":[0,7,4294967295],"wide":[18446744073709551615],"signed":[-3,12],"seconds":[0.5,1e-07,3],"none":[]}');
    expect(JSON.parse(line.slice('lists '.length))).toEqual({
      cycles: [0, 7, 4294967295],
      // 2^64 - 1 has no double; JSON.parse reads it as the nearest, 2^64 (the exact text is checked above).
      wide: [2 ** 64],
      signed: [-3, 12],
      seconds: [0.5, 1e-7, 3],
      none: [],
    });
  });
});
