/**
 * Every TOPOD_ERR_* code is declared once, in server/errors.ts: a source scan
 * fails on a code used anywhere in server/ that the module does not declare,
 * and on a code spelled as a string literal outside it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ProbeError } from '../../server/protocol/probe-error.js';
import {
  ERROR_CODE_MEANINGS,
  ERROR_CODES,
  isErrorCode,
  jobErrorCode,
  PROBE_ERROR_CODES,
  PROBLEM_CODES,
  problemType,
} from '../../server/errors.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MODULE = 'server/errors.ts';
const CODES = Object.values(ERROR_CODES) as string[];

function serverSources(): Array<{ file: string; text: string }> {
  return readdirSync(path.join(ROOT, 'server'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => `server/${file.split(path.sep).join('/')}`)
    .map((file) => ({ file, text: readFileSync(path.join(ROOT, file), 'utf8') }));
}

describe('error codes', () => {
  it('are well formed, unique, each with a meaning and its own problem type', () => {
    for (const code of CODES) {
      expect(code).toMatch(/^TOPOD_ERR_[A-Z]+(?:_[A-Z]+)*$/);
      expect(ERROR_CODE_MEANINGS.get(code as never)?.length, code).toBeGreaterThan(10);
    }
    expect(new Set(CODES).size).toBe(CODES.length);
    expect(new Set(CODES.map(problemType)).size).toBe(CODES.length);
    for (const code of PROBLEM_CODES) expect(isErrorCode(code)).toBe(true);
  });

  it('every code mentioned under server/ is declared in server/errors.ts', () => {
    const files = serverSources();
    expect(files.length).toBeGreaterThan(50);
    const undeclared: string[] = [];
    for (const { file, text } of files) {
      if (file === MODULE) continue;
      // A code built at run time (`TOPOD_ERR_PROBE_${x}`) shows up as an undeclared prefix.
      for (const match of text.matchAll(/TOPOD_ERR_[A-Z0-9_]*/g)) {
        if (!CODES.includes(match[0])) undeclared.push(`${file}: ${match[0]}`);
      }
    }
    expect(undeclared).toEqual([]);
  });

  it('no module but server/errors.ts spells a code as a string literal', () => {
    const literals: string[] = [];
    for (const { file, text } of serverSources()) {
      if (file === MODULE) continue;
      for (const match of text.matchAll(/(['"`])TOPOD_ERR_[A-Z0-9_]*\1/g)) literals.push(`${file}: ${match[0]}`);
    }
    expect(literals, 'import ERROR_CODES from server/errors.ts').toEqual([]);
  });

  it('docs/api.md documents exactly the declared codes', () => {
    const doc = readFileSync(path.join(ROOT, 'docs/api.md'), 'utf8');
    const start = doc.indexOf('## Error codes');
    expect(start).toBeGreaterThanOrEqual(0);
    const next = doc.slice(start + 1).search(/\n#{1,3} /);
    const section = doc.slice(start, next < 0 ? undefined : start + 1 + next);
    const documented = [...section.matchAll(/^\| `(TOPOD_ERR_[A-Z_]+)` \|/gm)].map((m) => m[1]);
    expect([...documented].sort()).toEqual([...CODES].sort());
  });

  it('a job records declared codes as they are, probe protocol codes mapped, anything else as PROBE_FAILED', () => {
    expect(jobErrorCode(new ProbeError('timeout', 'pchase did not answer within 10 ms'))).toBe(ERROR_CODES.PROBE_REQUEST_TIMEOUT);
    expect(jobErrorCode(new ProbeError('kernel_fault', 'x'))).toBe('TOPOD_ERR_PROBE_KERNEL_FAULT');
    expect(jobErrorCode({ code: ERROR_CODES.JOB_TIMEOUT })).toBe(ERROR_CODES.JOB_TIMEOUT);
    expect(jobErrorCode({ code: ERROR_CODES.EMPTY_SAMPLE })).toBe(ERROR_CODES.EMPTY_SAMPLE);
    expect(jobErrorCode(Object.assign(new Error('no such file'), { code: 'ENOENT' }))).toBe(ERROR_CODES.PROBE_FAILED);
    expect(jobErrorCode({ code: 'TOPOD_ERR_NOT_DECLARED' })).toBe(ERROR_CODES.PROBE_FAILED);
    expect(jobErrorCode({ code: 'toString' })).toBe(ERROR_CODES.PROBE_FAILED);
    expect(jobErrorCode(new Error('plain'))).toBe(ERROR_CODES.PROBE_FAILED);
    expect(jobErrorCode('a string')).toBe(ERROR_CODES.PROBE_FAILED);
    expect(new Set(Object.values(PROBE_ERROR_CODES)).size).toBe(Object.keys(PROBE_ERROR_CODES).length);
    expect(ERROR_CODES.PROBE_REQUEST_TIMEOUT).not.toBe(ERROR_CODES.JOB_TIMEOUT);
  });
});
