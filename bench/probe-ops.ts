/**
 * `npm run bench:probe-ops` — one `pchase` of 256 timed loads, end to end
 * through the JSON-lines transport (request written, kernel run, response
 * parsed), repeated; against `hello` through the same transport as the
 * protocol-only baseline. Each case runs in a fresh probe process.
 *
 * Uses the native probe when it is built and sees a GPU; otherwise the
 * simulated GPU's stdio server, and says so in every line it prints.
 * Environment: BENCH_ITERATIONS (default 200), BENCH_WARMUP (default 10).
 */
import { projectRoot } from '../server/paths.js';
import os from 'node:os';
import path from 'node:path';
import type { ProbeChannel } from '../server/gpu/backend.js';
import { JsonLinesChannel, NativeBackend } from '../server/gpu/native.js';
import type { PchaseArgs } from '../server/protocol/ops.js';

const ROOT = projectRoot();
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 200);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 10);
const CHASE: PchaseArgs = { space: 'global.ca', arrayBytes: 16384, strideBytes: 128, pattern: 'sequential', warmup: true, samples: 256 };

interface Target {
  label: string;
  open(): Promise<ProbeChannel>;
  close(): Promise<void>;
}

async function pickTarget(): Promise<Target> {
  const check = await NativeBackend.available();
  if (check.ok) {
    const backend = new NativeBackend();
    const gpu = (await backend.listDevices())[0]!;
    return {
      label: `native topod-probe ${backend.probeVersion} on ${gpu.name} (${gpu.uuid})`,
      open: () => backend.open(gpu),
      close: () => backend.close(),
    };
  }
  const sim = path.join(ROOT, 'server/gpu/sim/stdio.ts');
  const tsx = path.join(ROOT, 'node_modules/.bin/tsx');
  console.log(`[bench] no native probe (${check.reason}): measuring the SIMULATED GPU's stdio server instead`);
  return {
    label: 'SIMULATED GPU (server/gpu/sim/stdio.ts, h100-sxm5-80gb) — not a GPU measurement',
    open: async () => new JsonLinesChannel({ command: tsx, args: [sim, '--model', 'h100-sxm5-80gb', '--seed', '1'], label: 'sim stdio' }),
    close: async () => undefined,
  };
}

/** Median and p95 by nearest rank on the sorted samples; median averages the middle pair for even counts. */
function summarize(samplesMs: number[]): { medianMs: number; p95Ms: number; minMs: number } {
  const s = [...samplesMs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  const medianMs = s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  const p95Ms = s[Math.min(s.length - 1, Math.ceil(0.95 * s.length) - 1)]!;
  return { medianMs, p95Ms, minMs: s[0]! };
}

async function timeCase(target: Target, name: string, call: (c: ProbeChannel) => Promise<unknown>) {
  const channel = await target.open();
  try {
    for (let i = 0; i < WARMUP; i++) await call(channel);
    const samples: number[] = [];
    for (let i = 0; i < ITERATIONS; i++) {
      const t0 = process.hrtime.bigint();
      await call(channel);
      samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    return { name, ...summarize(samples) };
  } finally {
    await channel.close();
  }
}

const target = await pickTarget();
try {
  const rows = [
    await timeCase(target, 'pchase 256 loads (end to end)', (c) => c.request('pchase', CHASE)),
    await timeCase(target, 'hello (protocol only, baseline)', (c) => c.request('hello', {})),
  ];
  console.log(`\ntarget:  ${target.label}`);
  console.log(
    `machine: ${os.cpus()[0]?.model ?? 'unknown CPU'} x${os.cpus().length}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.platform()} ${os.release()}, node ${process.version}`,
  );
  console.log(`runs:    ${ITERATIONS} timed after ${WARMUP} warm-up, one fresh probe process per case\n`);
  console.log('case                              median ms    p95 ms    min ms');
  for (const r of rows)
    console.log(
      `${r.name.padEnd(34)}${r.medianMs.toFixed(3).padStart(9)}${r.p95Ms.toFixed(3).padStart(10)}${r.minMs.toFixed(3).padStart(10)}`,
    );
  const [chase, hello] = rows;
  console.log(`\npchase / hello median: ${(chase!.medianMs / hello!.medianMs).toFixed(2)}x`);
} finally {
  await target.close();
}
