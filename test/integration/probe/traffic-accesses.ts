/**
 * Proof in the compiler's output that every traffic kernel (issue 20) keeps
 * its accesses: each pattern kernel, for each element width, has the global
 * loads and stores of that width its pattern makes (read: a load; write: a
 * store and no load; rmw: both; vecmul: two loads and a store), so none was
 * optimised away or split. Pure functions over PTX (nvcc -ptx) or SASS
 * (cuobjdump -sass / nvdisasm) text; traffic-kernels.test.ts runs them on the
 * build, scripts/device/sass-check.sh through traffic-accesses-cli.ts.
 */
import type { Dialect } from './timed-loads.js';

export type Access = 'load' | 'store';

export interface KernelAccesses {
  kernel: string;
  pattern: 'read' | 'write' | 'rmw' | 'vecmul' | 'flush';
  /** Element width from the template argument: 4 (unsigned int), 8 (uint2), 16 (uint4). */
  elementBytes: number;
  loads: number[];
  stores: number[];
}

const PATTERN = /(read|write|rmw|vecmul)_kernel/;
const WIDTH_OF_ARGUMENT: Array<[RegExp, number]> = [
  [/I5uint4E|uint4>/, 16],
  [/I5uint2E|uint2>/, 8],
  [/IjE|unsigned int>/, 4],
];

/** Bytes one global access moves, or null for an instruction that is none. */
function globalAccess(text: string, dialect: Dialect): { kind: Access; bytes: number } | null {
  if (dialect === 'ptx') {
    const m = /^(?:@!?%p\d+\s+)?(ld|st)\.global(?:\.[a-z]+)*?(?:\.v(\d))?\.(?:[usbf])(\d+)\b/.exec(text);
    if (!m) return null;
    return { kind: m[1] === 'ld' ? 'load' : 'store', bytes: (Number(m[2] ?? 1) * Number(m[3])) / 8 };
  }
  const m = /^(?:@!?U?P[T\d]+\s+)?(LDG|STG)\.E(?:\.[A-Z0-9_]+)*/.exec(text);
  if (!m) return null;
  const width = /\.128\b/.test(m[0]) ? 16 : /\.64\b/.test(m[0]) ? 8 : /\.(U8|S8)\b/.test(m[0]) ? 1 : /\.(U16|S16)\b/.test(m[0]) ? 2 : 4;
  return { kind: m[1] === 'LDG' ? 'load' : 'store', bytes: width };
}

/** The global accesses of every traffic pattern kernel in `text`. */
export function trafficAccesses(text: string, dialect: Dialect): KernelAccesses[] {
  const out: KernelAccesses[] = [];
  let current: KernelAccesses | null = null;
  for (const raw of text.split('\n')) {
    const fn =
      dialect === 'ptx'
        ? /^\s*(?:\.visible\s+|\.weak\s+)*\.entry\s+([\w$]+)/.exec(raw)
        : (/Function\s*:\s*(\S+)/.exec(raw) ?? /^\s*\.text\.([\w$.]+):\s*$/.exec(raw));
    if (fn) {
      const name = fn[1]!;
      const pattern = PATTERN.exec(name)?.[1] as KernelAccesses['pattern'] | undefined;
      const width = WIDTH_OF_ARGUMENT.find(([re]) => re.test(name))?.[1];
      current = pattern && width ? { kernel: name, pattern, elementBytes: width, loads: [], stores: [] } : null;
      if (current) out.push(current);
      continue;
    }
    if (!current) continue;
    const body =
      dialect === 'ptx'
        ? raw.replace(/\/\/.*$/, '').trim()
        : (/^\s*\/\*[0-9a-f]+\*\/\s+(.*?)\s*;/.exec(raw)?.[1] ?? '').replace(/^\{\s*/, '');
    const access = body ? globalAccess(body, dialect) : null;
    if (access) (access.kind === 'load' ? current.loads : current.stores).push(access.bytes);
  }
  return out;
}

const NEEDS: Record<Exclude<KernelAccesses['pattern'], 'flush'>, { loads: number; stores: number }> = {
  read: { loads: 1, stores: 0 },
  write: { loads: 0, stores: 1 },
  rmw: { loads: 1, stores: 1 },
  vecmul: { loads: 2, stores: 1 },
};

/** Problems, one sentence each: a pattern kernel missing, or missing an access of its width, or a write kernel that loads. */
export function checkTrafficAccesses(kernels: readonly KernelAccesses[]): string[] {
  const problems: string[] = [];
  for (const pattern of Object.keys(NEEDS) as Array<keyof typeof NEEDS>) {
    for (const width of [4, 8, 16]) {
      const k = kernels.find((x) => x.pattern === pattern && x.elementBytes === width);
      if (!k) {
        problems.push(`no ${pattern}_kernel for ${width}-byte elements`);
        continue;
      }
      const need = NEEDS[pattern];
      const loads = k.loads.filter((b) => b === width).length;
      const stores = k.stores.filter((b) => b === width).length;
      if (loads < need.loads) problems.push(`${k.kernel}: ${loads} global load(s) of ${width} B, needs ${need.loads}`);
      if (stores < need.stores) problems.push(`${k.kernel}: ${stores} global store(s) of ${width} B, needs ${need.stores}`);
      if (pattern === 'write' && k.loads.length > 0)
        problems.push(`${k.kernel}: a write kernel that loads from global memory (${k.loads.length})`);
    }
  }
  return problems;
}

/** One line per kernel: its accesses by width. */
export function accessReport(kernels: readonly KernelAccesses[]): string {
  return kernels
    .map((k) => `${k.pattern} ${k.elementBytes} B: loads [${k.loads.join(' ')}] stores [${k.stores.join(' ')}]  ${k.kernel}`)
    .join('\n');
}
