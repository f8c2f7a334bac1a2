/**
 * Proof that a pchase stop clock waits for the timed load, read from the
 * compiler's output (issue 8). Pure functions over PTX (nvcc -ptx) or SASS
 * (cuobjdump -sass / nvdisasm) text, unit-tested on synthetic snippets in
 * timed-loads.test.ts; compile.test.ts runs the PTX check, sass-check.test.ts
 * and scripts/device/sass-check.sh the SASS one (timed-loads-cli.ts).
 *
 * A timed window is the code between two consecutive clock reads of one
 * basic block (no label or branch between them) that contains a load: in
 * native/probe/src/pchase.cu that is exactly the body of walk_timed (clock,
 * load, [consumer], clock). The timed load is the window's last load (an
 * address may itself be loaded first). Its consumers are the instructions
 * after it and before the stop clock that read the loaded register, or a
 * register computed from it: in-order issue makes such an instruction, and
 * so the stop clock behind it, wait for the load.
 */

export type Dialect = 'ptx' | 'sass';

export interface Instruction {
  line: number;
  text: string;
  opcode: string;
  writes: string[];
  reads: string[];
}

export interface TimedWindow {
  /** The function (mangled name) the window sits in. */
  kernel: string;
  /** The timed load instruction. */
  load: Instruction;
  /** Instructions between the load and the stop clock that read its value. */
  consumers: Instruction[];
}

// ---- parsing ------------------------------------------------------------------

interface Item {
  kind: 'function' | 'label' | 'instruction';
  name?: string;
  instruction?: Instruction;
}

/** Splits operands at top-level commas (not inside [] or {}). */
function splitOperands(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of s) {
    if (ch === '[' || ch === '{' || ch === '(') depth++;
    if (ch === ']' || ch === '}' || ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(current.trim());
      current = '';
    } else current += ch;
  }
  if (current.trim()) out.push(current.trim());
  return out;
}

const PTX_REGISTER = /%(?:rd|rs|rq|r|p|fd|f|hh|h|b)\d+\b/g;
const PTX_NO_DESTINATION = /^(st|red|bar|barrier|bra|brx|ret|exit|membar|fence|prefetch|call|trap|cp)\b/;

function ptxRegisters(operand: string): string[] {
  return operand.match(PTX_REGISTER) ?? [];
}

function parsePtx(text: string): Item[] {
  const items: Item[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/\/\/.*$/, '').trim();
    if (!line) return;
    const fn = /^(?:\.visible\s+|\.weak\s+|\.extern\s+)*\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([\w$]+)/.exec(line);
    if (fn) {
      items.push({ kind: 'function', name: fn[1] });
      return;
    }
    if (/^[\w$]+:$/.test(line)) {
      items.push({ kind: 'label', name: line.slice(0, -1) });
      return;
    }
    if (line.startsWith('.') || line === '{' || line === '}' || line.startsWith(')')) return;
    const m = /^(@!?%p\d+\s+)?([a-z][\w.]*)\s*(.*?);?$/.exec(line);
    if (!m) return;
    const predicate = m[1] ? ptxRegisters(m[1]) : [];
    const opcode = m[2]!;
    const operands = splitOperands(m[3] ?? '');
    const all = operands.flatMap(ptxRegisters);
    const writesFirst = !PTX_NO_DESTINATION.test(opcode) && operands.length > 0;
    const writes = writesFirst ? ptxRegisters(operands[0]!) : [];
    const reads = [...predicate, ...(writesFirst ? operands.slice(1).flatMap(ptxRegisters) : all)];
    items.push({ kind: 'instruction', instruction: { line: i + 1, text: line, opcode, writes, reads } });
  });
  return items;
}

/** SASS register operands: R5, R2.64 (R2 and R3), R4.128, uniform UR4; RZ/URZ are not registers. */
function sassRegisters(operand: string): string[] {
  const out: string[] = [];
  for (const m of operand.matchAll(/(?<![\w.])(U?R)(\d+)((?:\.(?:64|128|reuse|H0|H1|B\d|U\d+))*)/g)) {
    const base = Number(m[2]);
    const width = /\.128/.test(m[3]!) ? 4 : /\.64/.test(m[3]!) ? 2 : 1;
    for (let k = 0; k < width; k++) out.push(`${m[1]}${base + k}`);
  }
  return out;
}

const SASS_NO_DESTINATION =
  /^(ST|STG|STS|STL|STSM|RED|REDG|REDUX\.SUM\.S32\.NONE|BAR|BRA|BRX|JMP|JMX|CALL|RET|EXIT|MEMBAR|FENCE|CCTL|ERRBAR|NOP|BSYNC|BSSY|WARPSYNC|DEPBAR|YIELD|KILL|BPT)(\.|$)/;
const SASS_TEXTURE = /^(TEX|TLD|TLD4|TXD|TMML)(\.|$)/;
const SASS_BRANCH = /^(BRA|BRX|JMP|JMX|CALL|RET|EXIT|KILL|BPT|BREAK)(\.|$)/;

function parseSass(text: string): Item[] {
  const items: Item[] = [];
  text.split('\n').forEach((raw, i) => {
    const fn =
      /Function\s*:\s*(\S+)/.exec(raw) ?? /^\s*\.text\.([\w$.]+):\s*$/.exec(raw) ?? /^\s*\.type\s+([\w$.]+),\s*@function/.exec(raw);
    if (fn) {
      items.push({ kind: 'function', name: fn[1] });
      return;
    }
    if (/^\s*\.?L[\w$.]*:\s*(\/\/.*)?$/.test(raw) || /^\s*\.L_x_\d+:/.test(raw)) {
      items.push({ kind: 'label', name: raw.trim() });
      return;
    }
    const m = /^\s*\/\*[0-9a-f]+\*\/\s+(.*?)\s*;/.exec(raw);
    if (!m) return;
    const body = m[1]!.replace(/^\{\s*|\s*\}$/g, '');
    const p = /^(@!?U?P[T\d]+\s+)?([A-Z][A-Z0-9_.]*)\s*(.*)$/.exec(body);
    if (!p) return;
    const opcode = p[2]!;
    const operands = splitOperands(p[3] ?? '');
    const writesFirst = !SASS_NO_DESTINATION.test(opcode) && operands.length > 0;
    // Texture fetches name two destinations (RZ where unused) before their sources: TLD.LZ RZ, R3, R3, UR4, … writes R3 (seen in sm_90 ptxas output).
    const destinations = writesFirst ? (SASS_TEXTURE.test(opcode) ? 2 : 1) : 0;
    const writes = operands.slice(0, destinations).flatMap(sassRegisters);
    const reads = operands.slice(destinations).flatMap(sassRegisters);
    items.push({ kind: 'instruction', instruction: { line: i + 1, text: body, opcode, writes, reads } });
  });
  return items;
}

// ---- dialects -------------------------------------------------------------------

interface DialectRules {
  parse(text: string): Item[];
  isClock(i: Instruction): boolean;
  isLoad(i: Instruction): boolean;
  isBranch(i: Instruction): boolean;
}

const RULES: Record<Dialect, DialectRules> = {
  ptx: {
    parse: parsePtx,
    isClock: (i) => i.opcode.startsWith('mov') && /%clock(64)?\b/.test(i.text),
    isLoad: (i) => (/^(ld|ldu)\./.test(i.opcode) && !/^ld\.(param|local)\b/.test(i.opcode)) || /^(tex|tld4)\./.test(i.opcode),
    isBranch: (i) => /^(bra|brx|ret|exit|call|trap)\b/.test(i.opcode),
  },
  sass: {
    parse: parseSass,
    isClock: (i) => /^(S2R|CS2R|S2UR)(\.|$)/.test(i.opcode) && /\bSR_CLOCKLO\b|\bSR_CLOCKHI\b/.test(i.text),
    // Not LDL (spills), ULDC or an LDC from bank 0 (kernel parameters, which ptxas may reload anywhere): the chain is never there.
    isLoad: (i) => /^(LDG|LDS|LDC|LD|TEX|TLD|TLD4|TXD|TMML)(\.|$)/.test(i.opcode) && !/\bc\[0x0\]/.test(i.text),
    isBranch: (i) => SASS_BRANCH.test(i.opcode),
  },
};

/** Every timed window of the text (see the file comment). */
export function timedWindows(text: string, dialect: Dialect): TimedWindow[] {
  const rules = RULES[dialect];
  const windows: TimedWindow[] = [];
  let kernel = '';
  let block: Instruction[] = [];
  let lastClock = -1;
  const reset = () => {
    block = [];
    lastClock = -1;
  };
  for (const item of rules.parse(text)) {
    if (item.kind === 'function') {
      kernel = item.name!;
      reset();
      continue;
    }
    if (item.kind === 'label') {
      reset();
      continue;
    }
    const ins = item.instruction!;
    if (rules.isClock(ins)) {
      if (lastClock >= 0) {
        const between = block.slice(lastClock + 1);
        const loadAt = between.map((b) => rules.isLoad(b)).lastIndexOf(true);
        if (loadAt >= 0)
          windows.push({ kernel, load: between[loadAt]!, consumers: consumersOf(between[loadAt]!, between.slice(loadAt + 1)) });
      }
      block.push(ins);
      lastClock = block.length - 1;
      continue;
    }
    block.push(ins);
    if (rules.isBranch(ins)) reset();
  }
  return windows;
}

/** Instructions that read the load's result or a register computed from it (a register rewritten from other values stops counting). */
function consumersOf(load: Instruction, after: Instruction[]): Instruction[] {
  const tainted = new Set(load.writes);
  const consumers: Instruction[] = [];
  for (const ins of after) {
    const reads = ins.reads.some((r) => tainted.has(r));
    if (reads) consumers.push(ins);
    for (const w of ins.writes) {
      if (reads) tainted.add(w);
      else tainted.delete(w);
    }
  }
  return consumers;
}

/** What a window's load is, for grouping: PTX without the value type (ld.global.ca, tex.1d), SASS the whole opcode (LDG.E.STRONG.GPU). */
export function loadKind(load: Instruction, dialect: Dialect): string {
  if (dialect === 'sass') return load.opcode;
  if (load.opcode.startsWith('tex.')) return load.opcode.split('.').slice(0, 2).join('.');
  return load.opcode.replace(/(\.v[248])?\.[usbf](8|16|32|64)$/, '');
}

/** The SASS load class of an opcode: LDG, LDS, LDC, LD (generic), or TEX for any texture fetch (TEX, TLD, TLD4). */
export function sassLoadClass(opcode: string): string {
  const head = opcode.split('.')[0]!;
  return /^(TEX|TLD|TLD4|TXD|TMML)$/.test(head) ? 'TEX' : head;
}

/**
 * Whether the stop clock waits for the load. PTX: the consumer the probe
 * writes, a volatile shared store of the loaded value (st.volatile.shared).
 * SASS: any instruction reading it before the stop clock.
 */
export function isConsumed(w: TimedWindow, dialect: Dialect): boolean {
  return dialect === 'ptx' ? w.consumers.some((c) => c.opcode.startsWith('st.volatile.shared')) : w.consumers.length > 0;
}

export interface ConsumerCheck {
  dialect: Dialect;
  /** Kernels whose every timed load must be consumed (chase_kernel, pair_kernel), each with at least one window of each expected kind. */
  measuring: RegExp[];
  /** The self-test kernel: each expected kind timed both consumed and unconsumed. */
  selfTest: RegExp;
  /** Load kinds every kernel above must time (loadKind for PTX, sassLoadClass for SASS). */
  expectedKinds: string[];
}

function kindOf(w: TimedWindow, dialect: Dialect): string {
  return dialect === 'ptx' ? loadKind(w.load, dialect) : sassLoadClass(w.load.opcode);
}

const describe = (w: TimedWindow) => `${w.load.text} (line ${w.load.line}, ${w.kernel})`;

/** Problems found (empty: the proof holds). */
export function checkConsumers(windows: TimedWindow[], c: ConsumerCheck): string[] {
  const problems: string[] = [];
  const kinds = (ws: TimedWindow[]) => new Set(ws.map((w) => kindOf(w, c.dialect)));
  for (const pattern of c.measuring) {
    const mine = windows.filter((w) => pattern.test(w.kernel) && !c.selfTest.test(w.kernel));
    if (mine.length === 0) problems.push(`no timed load found in a kernel matching ${pattern}`);
    for (const w of mine) if (!isConsumed(w, c.dialect)) problems.push(`stop clock does not wait for ${describe(w)}`);
    const seen = kinds(mine);
    for (const k of c.expectedKinds) if (mine.length && !seen.has(k)) problems.push(`no timed ${k} load in a kernel matching ${pattern}`);
  }
  const self = windows.filter((w) => c.selfTest.test(w.kernel));
  if (self.length === 0) problems.push(`no timed load found in the self-test kernel (${c.selfTest})`);
  const consumed = kinds(self.filter((w) => isConsumed(w, c.dialect)));
  const unconsumed = kinds(self.filter((w) => !isConsumed(w, c.dialect)));
  for (const k of c.expectedKinds) {
    if (self.length && !consumed.has(k)) problems.push(`self-test kernel: no consumed timed ${k} load`);
    if (self.length && !unconsumed.has(k))
      problems.push(`self-test kernel: no unconsumed timed ${k} load (the check could not tell a dropped consumer)`);
  }
  return problems;
}

/** The kernels of native/probe/src/pchase.cu, by the part of their mangled names the checks match. */
export const PCHASE_KERNELS = {
  measuring: [/chase_kernel/, /pair_kernel/],
  selfTest: /consumer_selftest_kernel/,
};

/** One per memory space (protocol.ts MEMORY_SPACES: global.ca, global.cg, readonly, constant, shared, texture, global). */
export const PTX_LOAD_KINDS = ['ld.global.ca', 'ld.global.cg', 'ld.global.nc', 'ld.const', 'ld.shared', 'tex.1d', 'ld.global'];
/** SASS folds the three global flavours into LDG (its modifiers differ by architecture). */
export const SASS_LOAD_CLASSES = ['LDG', 'LDC', 'LDS', 'TEX'];

/** One line per window: kernel, load, consumed or not, and the consumer. */
export function report(windows: TimedWindow[], dialect: Dialect): string {
  return windows
    .map(
      (w) =>
        `${isConsumed(w, dialect) ? 'consumed  ' : 'UNCONSUMED'}  ${w.kernel.slice(-60)}  ${w.load.text}${w.consumers[0] ? `  <- ${w.consumers[0].text}` : ''}`,
    )
    .join('\n');
}

/** The L2-structure kernels (l2-partition.cu, l2-farnear.cu, l2-persist.cu): each times .cg loads the pchase way. */
export const L2_KERNELS: Readonly<Record<string, RegExp>> = {
  'l2-partition': /partition_kernel/,
  'l2-farnear': /farnear_kernel/,
  'l2-persist': /persist_timed_kernel/,
};

/** The L2 kernels a compiled file holds, by its name (l2-farnear-sm_90.sass → the farnear kernel); all of them when the name says none. */
export function l2KernelsOf(fileName: string): RegExp[] {
  const named = Object.entries(L2_KERNELS).filter(([source]) => fileName.includes(source));
  return (named.length ? named : Object.entries(L2_KERNELS)).map(([, pattern]) => pattern);
}

/**
 * Every kernel matching a pattern has a timed load, and every timed load of
 * it feeds its stop clock. A load issued before the start clock leaves its
 * window without a load, which shows as "no timed load" here.
 */
export function checkAllConsumed(windows: TimedWindow[], dialect: Dialect, kernels: readonly RegExp[]): string[] {
  const problems: string[] = [];
  for (const pattern of kernels) {
    const mine = windows.filter((w) => pattern.test(w.kernel));
    if (mine.length === 0) problems.push(`no timed load found in a kernel matching ${pattern}`);
    for (const w of mine) if (!isConsumed(w, dialect)) problems.push(`stop clock does not wait for ${describe(w)}`);
  }
  return problems;
}
