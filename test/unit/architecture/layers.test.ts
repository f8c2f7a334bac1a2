/**
 * Import boundaries (issue 18, DESIGN.md): each server/ folder sits on a floor
 * and imports only from its own floor or below. The upward imports that are
 * still there are listed: a new one fails, and so does a listed one that is
 * gone (take it off the list, so it cannot come back unseen).
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SERVER = path.resolve(import.meta.dirname, '../../../server');

/** Floors, bottom up: the model imports nothing; the daemon and main compose everything. */
const FLOORS: Record<string, number> = {
  model: 0,
  errors: 1,
  paths: 1,
  version: 1,
  'node-flags': 1,
  config: 1,
  analysis: 2,
  store: 2,
  dynamic: 2,
  gpu: 2,
  discovery: 3,
  results: 4,
  jobs: 5,
  topology: 6,
  faces: 7,
  fleet: 7,
  plugins: 8,
  api: 9,
  app: 10,
  'openapi-document': 10,
  cli: 10,
  daemon: 11,
  main: 12,
};

/** Upward imports not fixed yet (issue 18 item 3). */
const KNOWN_UPWARD: string[] = [];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? sources(full) : name.endsWith('.ts') ? [full] : [];
  });
}

/** The folder (or top-level module) a server path belongs to. */
function unit(relative: string): string {
  return relative.split('/')[0]!.replace(/\.(ts|js)$/, '');
}

interface Edge {
  from: string;
  to: string;
  /** `import type`: a shape, no code runs. */
  typeOnly: boolean;
}

function edges(): Edge[] {
  const found: Edge[] = [];
  for (const file of sources(SERVER)) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/^(import type|import|export)[^'"]*?from '(\.[^']+)'/gm)) {
      const target = path.relative(SERVER, path.resolve(path.dirname(file), match[2]!));
      if (target.startsWith('..')) continue;
      found.push({ from: path.relative(SERVER, file), to: target.replace(/\.js$/, ''), typeOnly: match[1] === 'import type' });
    }
  }
  return found;
}

describe('import boundaries', () => {
  const all = edges();

  it('knows the floor of every folder', () => {
    const unknown = [...new Set(all.flatMap((edge) => [unit(edge.from), unit(edge.to)]))].filter((name) => !(name in FLOORS));
    expect(unknown, 'add new folders to FLOORS (and to DESIGN.md)').toEqual([]);
  });

  it('imports only from the same floor or below, but for the listed exceptions', () => {
    const upward = all
      .filter((edge) => unit(edge.from) !== unit(edge.to) && (FLOORS[unit(edge.to)] ?? 0) > (FLOORS[unit(edge.from)] ?? 0))
      .map((edge) => `${edge.from} -> ${edge.to}`);
    expect([...new Set(upward)].sort()).toEqual(KNOWN_UPWARD);
  });

  it('keeps the model free of imports from the rest of the daemon', () => {
    expect(all.filter((edge) => unit(edge.from) === 'model' && unit(edge.to) !== 'model')).toEqual([]);
  });

  it('keeps routes away from SQLite, NVML and the probe (they read the topology service; shapes may be shared)', () => {
    expect(all.filter((edge) => unit(edge.from) === 'api' && !edge.typeOnly && ['store', 'dynamic', 'gpu'].includes(unit(edge.to)))).toEqual([]);
  });
});
