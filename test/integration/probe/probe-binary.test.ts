import { describe, expect, it } from 'vitest';
import { PROBE_OPS } from '../../../server/protocol/ops.js';
import { exchange, PROBE_PATH, probeBuilt } from './raw-probe.js';

// The real topod-probe binary on whatever this machine has: the protocol
// envelope and validation do not need a GPU (ops that do answer `unsupported`).
describe.skipIf(!probeBuilt)(
  `topod-probe binary protocol (${probeBuilt ? PROBE_PATH : `skipped: ${PROBE_PATH} not built (npm run build:probe needs nvcc or hipcc)`})`,
  () => {
    it('answers every line in order, malformed ones with id null, and exits 0 at end of input', async () => {
      const { responses, exitCode } = await exchange([
        '{"id":1,"op":"hello","args":{}}',
        '{"id":2,"op":"pchase","args":',
        '',
        '[1,2,3]',
        '{"id":-1,"op":"hello"}',
        '{"id":3,"op":42}',
        '{"id":4,"op":"teleport","args":{}}',
        '{"id":5,"op":"hello","args":[]}',
        '{"id":6,"op":"hello"}',
      ]);
      expect(exitCode).toBe(0);
      expect(responses.map((r) => [r.id, r.ok])).toEqual([
        [1, true],
        [null, false],
        [null, false],
        [null, false],
        [3, false],
        [4, false],
        [5, false],
        [6, true],
      ]);
      const codes = responses.filter((r) => r.ok === false).map((r) => (r.error as { code: string }).code);
      expect(codes).toEqual(['bad_request', 'bad_request', 'bad_request', 'bad_request', 'unknown_op', 'bad_request']);
      expect((responses[1]!.error as { message: string }).message).toMatch(/malformed JSON: .* at offset \d+/);
    });

    it('says hello with the protocol version and a device list (possibly empty)', async () => {
      const { responses } = await exchange(['{"id":1,"op":"hello","args":{}}']);
      const result = responses[0]!.result as { protocolVersion: number; vendor: string; devices: unknown[]; probeVersion: string };
      expect(result.protocolVersion).toBe(1);
      expect(['nvidia', 'amd']).toContain(result.vendor);
      expect(Array.isArray(result.devices)).toBe(true);
      expect(result.probeVersion).toMatch(/^\d+\.\d+\.\d+/);
    });

    it('lists in hello exactly the protocol ops, each of which it answers', async () => {
      const { responses } = await exchange(['{"id":1,"op":"hello","args":{}}', '{"id":2,"op":"teleport","args":{}}']);
      const ops = (responses[0]!.result as { ops: string[] }).ops;
      expect([...ops].sort()).toEqual([...PROBE_OPS].sort());
      expect(ops).not.toContain('teleport');
      expect((responses[1]!.error as { code: string }).code).toBe('unknown_op');
    });

    it('knows every protocol op (each answers something other than unknown_op)', async () => {
      const { responses } = await exchange(PROBE_OPS.map((op, i) => JSON.stringify({ id: i + 1, op, args: {} })));
      expect(responses).toHaveLength(PROBE_OPS.length);
      for (const r of responses) expect((r.error as { code?: string } | undefined)?.code).not.toBe('unknown_op');
    });
  },
);
