/**
 * server/config.ts is the one place the daemon reads its environment: a
 * source scan fails when any other module under server/ reads process.env,
 * and when native code reads a TOPOD_* variable the config table (and so
 * --help and docs/configuration.md) does not list.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SETTINGS, TEST_SETTINGS } from '../../server/config.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** main.ts hands process.env to loadConfig; config.ts parses it. */
const ALLOWED = new Set(['server/config.ts', 'server/main.ts']);

function sources(dir: string, extensions: RegExp): string[] {
  return readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => extensions.test(file) && !file.split(path.sep).includes('build') && !file.split(path.sep).includes('node_modules'))
    .map((file) => path.join(dir, file).split(path.sep).join('/'));
}

/** `process.env`, `process['env']`, `const { env } = process`, `globalThis.process.env`. */
const ENV_READ =
  /\bprocess\s*(?:\?\.|\.)\s*env\b|\bprocess\s*\[\s*['"`]env['"`]\s*\]|\{[^}]*\benv\b[^}]*\}\s*=\s*(?:globalThis\.)?process\b/;

describe('environment access', () => {
  it('finds something to scan (the scan is not vacuous)', () => {
    const files = sources('server', /\.ts$/);
    expect(files).toContain('server/config.ts');
    expect(files).toContain('server/dynamic/poller.ts');
    expect(files.length).toBeGreaterThan(50);
    expect(ENV_READ.test('const x = process.env.TOPOD_POLL_MS')).toBe(true);
    expect(ENV_READ.test("const y = process['env']")).toBe(true);
    expect(ENV_READ.test('const { env } = process;')).toBe(true);
    expect(ENV_READ.test('options.env ?? {}')).toBe(false);
  });

  it('is read only in server/config.ts and server/main.ts', () => {
    const offenders: string[] = [];
    for (const file of sources('server', /\.ts$/)) {
      if (ALLOWED.has(file)) continue;
      readFileSync(path.join(ROOT, file), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (ENV_READ.test(line)) offenders.push(`${file}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(offenders, 'read settings in server/config.ts and pass them down').toEqual([]);
  });

  it('every TOPOD_* variable native code reads is in the config table', () => {
    const documented = new Set<string>([...SETTINGS.map((s) => s.env), ...TEST_SETTINGS.map((t) => t.env)]);
    const read: string[] = [];
    for (const file of sources('native', /\.(c|cc|cpp|cu|h|hpp)$/)) {
      for (const match of readFileSync(path.join(ROOT, file), 'utf8').matchAll(/getenv\(\s*"(TOPOD_[A-Z0-9_]+)"\s*\)/g)) {
        read.push(`${match[1]} (${file})`);
        expect(documented.has(match[1] as string), `${match[1]} is read by ${file} but not declared in server/config.ts`).toBe(true);
      }
    }
    expect(read.length).toBeGreaterThan(0);
  });
});
