/**
 * Property-based test of the probe protocol: random JSON lines — known and
 * unknown ops, random arguments, non-objects, broken JSON, huge ids — into
 * the simulator's stdio adapter and, where it is built and runs here, the
 * native `topod-probe`. For every request with a valid id exactly one
 * response with that id, every line answered, never a crash or a hang.
 *
 * Seeded and bounded: TOPOD_FUZZ_SEED replays, TOPOD_FUZZ_RUNS sets the number of batches.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { PROBE_OPS } from '../../server/protocol/ops.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
// A fixed default keeps CI deterministic; TOPOD_FUZZ_SEED explores (any integer) or replays a printed seed.
const SEED = Number(process.env['TOPOD_FUZZ_SEED'] ?? 20_261_123);
const RUNS = Number(process.env['TOPOD_FUZZ_RUNS_PROBE'] ?? 25);
const NATIVE = `${ROOT}native/probe/build/topod-probe`;

/** A long-lived probe process answering JSON lines; `send` resolves with the responses to one batch. */
class Conversation {
  private readonly waiting: Array<(line: string) => void> = [];
  private readonly buffered: string[] = [];
  private exited: number | null | undefined;
  stderr = '';

  constructor(readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const waiter = this.waiting.shift();
      if (waiter) waiter(line);
      else this.buffered.push(line);
    });
    child.stderr?.on('data', (c: Buffer) => (this.stderr = (this.stderr + c.toString()).slice(-2000)));
    child.on('exit', (code) => (this.exited = code));
  }

  private next(timeoutMs: number): Promise<string> {
    const line = this.buffered.shift();
    if (line !== undefined) return Promise.resolve(line);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no response within ${timeoutMs} ms (exited: ${String(this.exited)}); stderr: ${this.stderr}`)),
        timeoutMs,
      );
      this.waiting.push((l) => (clearTimeout(timer), resolve(l)));
    });
  }

  async send(lines: string[], timeoutMs = 10_000): Promise<Array<{ id: unknown; ok: unknown }>> {
    this.child.stdin!.write(lines.map((l) => `${l}\n`).join(''));
    const responses: Array<{ id: unknown; ok: unknown }> = [];
    for (let i = 0; i < lines.length; i++) responses.push(JSON.parse(await this.next(timeoutMs)) as { id: unknown; ok: unknown });
    return responses;
  }

  get alive(): boolean {
    return this.exited === undefined;
  }
}

/** A request line: well-formed or not. Slow measurements are kept small so a batch stays quick. */
function requestLine(id: number) {
  const smallArgs = fc.record(
    {
      space: fc.constantFrom('global.ca', 'global.cg', 'shared', 'texture', 'bogus'),
      arrayBytes: fc.oneof(fc.integer({ min: -10, max: 65536 }), fc.constant(2 ** 60), fc.double()),
      strideBytes: fc.oneof(fc.integer({ min: -4, max: 512 }), fc.string()),
      pattern: fc.constantFrom('random', 'sequential', 'zigzag'),
      warmup: fc.oneof(fc.boolean(), fc.constant('yes')),
      samples: fc.integer({ min: -1, max: 64 }),
      arrayBytesList: fc.array(fc.integer({ min: -1, max: 32768 }), { maxLength: 3 }),
    },
    { requiredKeys: [] },
  );
  const args = fc.oneof(smallArgs, fc.jsonValue({ maxDepth: 2 }), fc.constant(undefined));
  const op = fc.oneof(
    fc.constantFrom(...PROBE_OPS.filter((o) => o !== 'calibrate' && o !== 'bandwidth' && o !== 'selftest.consumer')),
    fc.string({ maxLength: 12 }),
  );
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc
        .tuple(op, args)
        .map(([o, a]) => ({ line: JSON.stringify(a === undefined ? { id, op: o } : { id, op: o, args: a }), id: id as number | null })),
    },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((v) => ({ line: JSON.stringify(v), id: null as number | null })) },
    {
      weight: 1,
      arbitrary: fc
        .string({ minLength: 1, maxLength: 40 })
        .filter((s) => !s.includes('\n') && s.trim() !== '')
        .map((s) => ({ line: s, id: null as number | null })),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(
          '{"id": 1.5, "op": "hello"}',
          '{"id": -1, "op": "hello"}',
          `{"id": ${2 ** 60}, "op": "hello"}`,
          '{"id": "7", "op": "hello"}',
        )
        .map((line) => ({ line, id: null as number | null })),
    },
  );
}

const batch = fc.integer({ min: 1, max: 8 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => requestLine(1000 + i))));

async function fuzz(conversation: Conversation): Promise<void> {
  let base = 0;
  await fc.assert(
    fc.asyncProperty(batch, async (requests) => {
      base += 100;
      const lines = requests.map((r) => (r.id === null ? r.line : r.line.replace(`"id":${r.id}`, `"id":${r.id + base}`)));
      const responses = await conversation.send(lines);
      requests.forEach((r, i) => {
        const response = responses[i] as { id: unknown; ok: unknown };
        expect(typeof response.ok, lines[i]).toBe('boolean');
        if (r.id !== null) expect(response.id, lines[i]).toBe(r.id + base);
        else expect(response.ok, lines[i]).toBe(false);
      });
      expect(conversation.alive).toBe(true);
      // And it still answers a plain hello afterwards.
      const [hello] = await conversation.send([JSON.stringify({ id: 1, op: 'hello', args: {} })]);
      expect(hello).toMatchObject({ id: 1 });
    }),
    { seed: SEED, numRuns: RUNS, interruptAfterTimeLimit: 15_000, markInterruptAsFailure: false },
  );
}

const started: ChildProcess[] = [];
afterAll(() => {
  for (const child of started) child.kill('SIGKILL');
});

describe('probe protocol fuzz (seed printed on failure; TOPOD_FUZZ_SEED replays)', () => {
  it('the simulator answers every line, one response per id, and never dies', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'server/gpu/sim/stdio.ts', '--model', 'a100-40gb', '--seed', '7'], {
      cwd: ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    started.push(child);
    await fuzz(new Conversation(child));
  }, 60_000);

  it('the native topod-probe does the same where it is built and sees a GPU', async (context) => {
    if (!existsSync(NATIVE)) return context.skip('native/probe/build/topod-probe is not built here');
    const child = spawn(NATIVE, [], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    started.push(child);
    const conversation = new Conversation(child);
    const hello = await conversation.send([JSON.stringify({ id: 1, op: 'hello', args: {} })], 20_000).catch(() => null);
    if (!hello || hello[0]?.ok !== true)
      return context.skip(`topod-probe does not answer hello here (no GPU?): ${conversation.stderr.slice(0, 200)}`);
    await fuzz(conversation);
  }, 60_000);
});
