/**
 * `npm run generate:limits`: writes native/probe/src/limits.generated.h from
 * the probe protocol's one table of limits (server/protocol/limits.ts), so the
 * native probe and the simulated GPU check the same numbers. The header is
 * committed: a fresh clone builds the probe with CMake alone, and
 * test/unit/protocol/limits-header.test.ts fails while it is stale.
 */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as PROBE_LIMITS from '../server/protocol/limits.js';

export const LIMITS_HEADER_PATH = fileURLToPath(new URL('../native/probe/src/limits.generated.h', import.meta.url));

/** MAX_ARRAY_BYTES → kMaxArrayBytes, TRAFFIC_FLUSH_L2_MULTIPLE → kTrafficFlushL2Multiple. */
export function cppConstantName(name: string): string {
  return `k${name
    .split('_')
    .map((word) => word[0] + word.slice(1).toLowerCase())
    .join('')}`;
}

/** Powers of two from 1 MiB up as shifts (as a reader writes them), everything else in decimal. */
function cppValue(value: number): string {
  const exponent = Math.log2(value);
  return Number.isInteger(exponent) && exponent >= 20 ? `uint64_t{1} << ${exponent}` : String(value);
}

export function renderLimitsHeader(limits: Readonly<Record<string, unknown>> = PROBE_LIMITS): string {
  // Sorted by name: a module namespace lists its exports in an order that depends on the loader.
  const entries = Object.entries(limits).sort(([a], [b]) => (a < b ? -1 : 1));
  const lines = entries.map(([name, value]) => {
    if (!/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/.test(name)) throw new Error(`limit ${name}: names are SCREAMING_CASE`);
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
      throw new Error(`limit ${name}: must be a non-negative safe integer (the header's type is uint64_t), got ${String(value)}`);
    }
    return `constexpr uint64_t ${cppConstantName(name)} = ${cppValue(value)};`;
  });
  return [
    '// Generated from server/protocol/limits.ts by `npm run generate:limits`: do not edit.',
    '// What each limit means, and the rules that use it: server/protocol/limits.ts and',
    '// server/protocol/validate.ts. The checks themselves are in limits.h.',
    '#pragma once',
    '',
    '#include <cstdint>',
    '',
    'namespace topod::probe::limits {',
    '',
    ...lines,
    '',
    '}  // namespace topod::probe::limits',
    '',
  ].join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await writeFile(LIMITS_HEADER_PATH, renderLimitsHeader());
  console.log(`wrote ${LIMITS_HEADER_PATH}`);
}
