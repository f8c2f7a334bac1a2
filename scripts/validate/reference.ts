/**
 * Reads published reference values from a Markdown file of tables
 * (`| element | attribute | MT4G | other references |`, one section per GPU
 * whose heading names it). Used by `npm run validate:gpu` only: the daemon
 * never reads references — a measured value must be measured.
 */

export interface ReferenceValue {
  element: string;
  attribute: string;
  value: number;
  /** The cell as written, for the table. */
  text: string;
  bound?: 'lower';
  /** For `sharedWith`: the elements named (value is their count). */
  names?: string[];
}

const ELEMENTS: Record<string, string> = {
  l1: 'l1',
  l2: 'l2',
  texture: 'texture',
  'read-only': 'readOnly',
  'constant l1': 'constantL1',
  'constant l1.5': 'constantL15',
  shared: 'shared',
  'device memory': 'deviceMemory',
};

const ATTRIBUTES: Record<string, string> = {
  size: 'size',
  'size (api)': 'size',
  line: 'lineSize',
  fetch: 'fetchGranularity',
  'fetch granularity': 'fetchGranularity',
  latency: 'latency',
  'segment size': 'segmentSize',
  segments: 'amount',
  'miss penalty': 'missPenalty',
  'amount per sm': 'amount',
  amount: 'amount',
  'shared with': 'sharedWith',
  read: 'readBandwidth',
  'read bandwidth': 'readBandwidth',
  'write bandwidth': 'writeBandwidth',
};

/** The rows of the first section whose heading contains `gpuName` (case-insensitive); [] when none does. */
export function parseReference(markdown: string, gpuName: string): ReferenceValue[] {
  const sections = markdown.split(/^## /m).slice(1);
  const section = sections.find((text) => text.split('\n', 1)[0]!.toLowerCase().includes(gpuName.toLowerCase()));
  if (!section) return [];
  const out: ReferenceValue[] = [];
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim());
    if (cells.length < 4 || cells[1] === 'element' || /^-+$/.test(cells[1] ?? '')) continue;
    const element = ELEMENTS[cells[1]!.toLowerCase()];
    if (!element) continue;
    const names = cells[2]!.split('/').map((name) => name.trim().toLowerCase());
    const values = cells[3]!.split(' / ').map((value) => value.trim());
    names.forEach((name, i) => {
      const attribute = ATTRIBUTES[name];
      const text = values.length === names.length ? values[i]! : cells[3]!;
      if (attribute === 'sharedWith') {
        const named = text
          .split(',')
          .map((name) => ELEMENTS[name.trim().toLowerCase()])
          .filter((name): name is string => name !== undefined);
        if (named.length > 0 || /^(none|—|-)$/i.test(text))
          out.push({ element, attribute, value: named.length, text, names: named.sort() });
        return;
      }
      const value = firstNumber(text);
      if (!attribute || value === null) return;
      // "4529 / 3495 GiB/s": a value without its own unit takes the cell's.
      const entry: ReferenceValue = { element, attribute, value: value * unitScale(hasUnit(text) ? text : cells[3]!), text };
      if (text.startsWith('>')) entry.bound = 'lower';
      out.push(entry);
    });
  }
  return out;
}

function firstNumber(text: string): number | null {
  const match = /(\d+(?:\.\d+)?)/.exec(text.replace(/(\d),(\d{3})/g, '$1$2'));
  return match ? Number(match[1]) : null;
}

const UNITS: ReadonlyArray<[RegExp, number]> = [
  [/\bKiB\b/, 1024],
  [/\bMiB\b/, 1024 ** 2],
  [/\bGiB\/s\b/, 1024 ** 3],
  [/\bTiB\/s\b/, 1024 ** 4],
  [/\bGB\/s\b/, 1e9],
  [/\bTB\/s\b/, 1e12],
];

function hasUnit(text: string): boolean {
  return UNITS.some(([pattern]) => pattern.test(text)) || /\b(B|cycles)\b/.test(text);
}

function unitScale(text: string): number {
  return UNITS.find(([pattern]) => pattern.test(text))?.[1] ?? 1;
}
