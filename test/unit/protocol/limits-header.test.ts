import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LIMITS_HEADER_PATH, cppConstantName, renderLimitsHeader } from '../../../scripts/generate-limits.js';
import * as PROBE_LIMITS from '../../../server/protocol/limits.js';

describe('the native probe limits header (generated from server/protocol/limits.ts)', () => {
  it('is committed as the table generates it: after changing a limit, run `npm run generate:limits`', () => {
    expect(readFileSync(LIMITS_HEADER_PATH, 'utf8')).toBe(renderLimitsHeader());
  });

  it('holds every limit of the table, under its C++ name and with its value', () => {
    const header = renderLimitsHeader();
    for (const name of Object.keys(PROBE_LIMITS))
      expect(header).toMatch(new RegExp(`constexpr uint64_t ${cppConstantName(name)} = [^;]+;`));
    expect(header).toContain('constexpr uint64_t kMaxArrayBytes = uint64_t{1} << 52;');
    expect(header).toContain('constexpr uint64_t kMaxSamples = 8192;');
    expect(header).toContain('constexpr uint64_t kMaxChainBytes = 17179869180;');
  });

  it('names constants as the probe does', () => {
    expect(cppConstantName('MAX_ARRAY_BYTES')).toBe('kMaxArrayBytes');
    expect(cppConstantName('TRAFFIC_FLUSH_L2_MULTIPLE')).toBe('kTrafficFlushL2Multiple');
  });

  it('refuses a limit a uint64_t cannot hold exactly, or a name it cannot turn into a C++ one', () => {
    expect(() => renderLimitsHeader({ MAX_THINGS: -1 })).toThrow(/MAX_THINGS: must be a non-negative safe integer/);
    expect(() => renderLimitsHeader({ MAX_THINGS: 0.5 })).toThrow(/MAX_THINGS/);
    expect(() => renderLimitsHeader({ MAX_THINGS: 2 ** 60 })).toThrow(/MAX_THINGS/);
    expect(() => renderLimitsHeader({ maxThings: 1 })).toThrow(/SCREAMING_CASE/);
  });
});
