import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { ProbeResponse } from '../../../server/protocol/ops.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** Sends lines to a fresh stdio adapter and collects one response per request line. */
async function converse(args: string[], lines: string[]): Promise<{ responses: ProbeResponse[]; code: number | null }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/gpu/sim/stdio.ts', ...args], {
    cwd: root,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const responses: ProbeResponse[] = [];
  const reader = createInterface({ input: child.stdout });
  reader.on('line', (line) => responses.push(JSON.parse(line) as ProbeResponse));
  child.stdin.end(lines.map((line) => `${line}\n`).join(''));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { responses, code };
}

describe('sim stdio adapter', () => {
  it('serves the JSON-lines protocol, errors included', async () => {
    const { responses, code } = await converse(
      ['--model', 'a100-40gb', '--seed', '1'],
      [
        JSON.stringify({ id: 1, op: 'hello', args: {} }),
        JSON.stringify({
          id: 2,
          op: 'pchase',
          args: { space: 'global.ca', arrayBytes: 4096, strideBytes: 32, pattern: 'random', warmup: true, samples: 8, seed: 3 },
        }),
        'not json',
        JSON.stringify({
          id: 4,
          op: 'pchase',
          args: { space: 'global.ca', arrayBytes: -1, strideBytes: 32, pattern: 'sequential', warmup: true, samples: 8 },
        }),
        JSON.stringify({ id: 5, op: 'warp.drive', args: {} }),
      ],
    );
    expect(code).toBe(0);
    expect(responses.map((response) => [response.id, response.ok])).toEqual([
      [1, true],
      [2, true],
      [null, false],
      [4, false],
      [5, false],
    ]);
    const hello = responses[0] as { result: { devices: Array<{ name: string; uuid: string }> } };
    expect(hello.result.devices[0]!.name).toBe('NVIDIA A100-SXM4-40GB');
    expect((responses[1] as { result: { latenciesCycles: number[] } }).result.latenciesCycles).toHaveLength(8);
    expect(responses.slice(2).map((response) => (response.ok ? null : response.error.code))).toEqual([
      'bad_request',
      'bad_request',
      'unknown_op',
    ]);
  });

  it('exits with a usage error for an unknown model', async () => {
    const { code } = await converse(['--model', 'v100'], []);
    expect(code).toBe(2);
  });
});
