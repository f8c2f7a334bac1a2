/**
 * Import boundaries (issue 18, DESIGN.md): each server/ folder sits on a floor
 * and imports only from its own floor or below, and nothing imports in a
 * circle, neither folders nor files: a cycle fails, and is broken by moving
 * the piece both sides need down into a module of its own.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SERVER = path.resolve(import.meta.dirname, '../../../server');

/** Floors, bottom up: the model imports nothing; the probe protocol lies under the backends; the daemon and main compose everything. */
const FLOORS: Record<string, number> = {
  model: 0,
  errors: 1,
  paths: 1,
  version: 1,
  'node-flags': 1,
  config: 1,
  protocol: 2,
  analysis: 3,
  store: 3,
  dynamic: 3,
  gpu: 3,
  discovery: 4,
  results: 5,
  jobs: 6,
  topology: 7,
  faces: 8,
  fleet: 8,
  plugins: 9,
  api: 10,
  app: 11,
  'openapi-document': 11,
  cli: 11,
  daemon: 12,
  main: 13,
};

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
  /** The importing file, relative to server/ (`api/gpus.ts`). */
  from: string;
  /** The imported module, relative to server/, without extension (`model/gpu-schema`). */
  to: string;
  /** `import type`: a shape, no code runs. */
  typeOnly: boolean;
}

const name = (edge: Edge) => `${edge.from} -> ${edge.to}`;
const moduleOf = (file: string) => file.replace(/\.ts$/, '');

/** `import … from`, `export … from`, a bare `import './x.js'` and a dynamic `import('./x.js')`. */
const IMPORTS = [
  /^(import type|import|export)[^'"]*?from ['"](\.[^'"]+)['"]/gm,
  /^(import) ['"](\.[^'"]+)['"]/gm,
  /\b(import)\(['"](\.[^'"]+)['"]\)/g,
];

function edges(): Edge[] {
  const found: Edge[] = [];
  for (const file of sources(SERVER)) {
    const text = readFileSync(file, 'utf8');
    for (const pattern of IMPORTS) {
      for (const match of text.matchAll(pattern)) {
        const target = path.relative(SERVER, path.resolve(path.dirname(file), match[2]!));
        if (target.startsWith('..')) continue;
        found.push({ from: path.relative(SERVER, file), to: target.replace(/\.js$/, ''), typeOnly: match[1] === 'import type' });
      }
    }
  }
  return found;
}

/** The strongly connected groups of more than one node (Tarjan): every import cycle, as the nodes on it. */
function cycles(graph: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== node);
    if (group.length > 1 || graph.get(node)?.has(node)) found.push(group.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

function graphOf(pairs: ReadonlyArray<readonly [string, string]>): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const [from, to] of pairs) {
    if (!graph.has(from)) graph.set(from, new Set());
    graph.get(from)!.add(to);
  }
  return graph;
}

describe('import boundaries', () => {
  const all = edges();

  it('knows the floor of every folder', () => {
    expect(all.length, 'the scan finds the imports').toBeGreaterThan(500);
    const unknown = [...new Set(all.flatMap((edge) => [unit(edge.from), unit(edge.to)]))].filter((folder) => !(folder in FLOORS));
    expect(unknown, 'add new folders to FLOORS (and to DESIGN.md)').toEqual([]);
  });

  it('imports only from the same floor or below', () => {
    const upward = all
      .filter((edge) => unit(edge.from) !== unit(edge.to) && (FLOORS[unit(edge.to)] ?? 0) > (FLOORS[unit(edge.from)] ?? 0))
      .map(name);
    expect([...new Set(upward)].sort()).toEqual([]);
  });

  it('has no import cycle between folders', () => {
    const between = all.filter((edge) => unit(edge.from) !== unit(edge.to)).map((edge) => [unit(edge.from), unit(edge.to)] as const);
    expect(cycles(graphOf(between))).toEqual([]);
  });

  it('has no import cycle between files', () => {
    const graph = graphOf(all.map((edge) => [moduleOf(edge.from), edge.to] as const));
    expect(cycles(graph), 'an import cycle: break it (move the shared piece down)').toEqual([]);
  });

  it('keeps TypeBox schemas in the model (routes may still shape their own headers and query strings)', () => {
    const building = sources(SERVER)
      .map((file) => path.relative(SERVER, file))
      .filter((file) => !['model', 'api'].includes(unit(file)))
      .filter((file) => /^import (?!type )[^'"]*from '@sinclair\/typebox'/m.test(readFileSync(path.join(SERVER, file), 'utf8')));
    expect(building, 'move the schema to server/model/').toEqual([]);
  });

  it('keeps the model free of imports from the rest of the daemon', () => {
    expect(all.filter((edge) => unit(edge.from) === 'model' && unit(edge.to) !== 'model')).toEqual([]);
  });

  it('keeps routes away from SQLite, NVML and the probe (they read the topology service; shapes may be shared)', () => {
    expect(
      all.filter((edge) => unit(edge.from) === 'api' && !edge.typeOnly && ['store', 'dynamic', 'gpu'].includes(unit(edge.to))),
    ).toEqual([]);
  });
});
