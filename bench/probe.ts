/**
 * `npm run bench:probe [-- --backend native|sim --model h100-sxm5-80gb --only l1,l2]` — one
 * full (or selective) discovery, timed per phase (starting the probe: the
 * process and its GPU context; each strategy, plus hello, calibrate and
 * analysis): wall time and probe operations per phase and in total. On the
 * GPU (the native probe, when built and a GPU is visible) that is the real
 * cost; on the simulated GPU the wall time is JavaScript's, so it also prints
 * the simulated device time (what the modelled loads, launches and flushes
 * would take on the GPU) and the loads walked.
 */
import { writeFileSync } from 'node:fs';
import { Command } from 'commander';
import type { ProbeChannel } from '../server/gpu/backend.js';
import { NativeBackend } from '../server/gpu/native.js';
import { modelById, SimulatedChannel, SimulatedDevice, SimulatedProbe } from '../server/gpu/sim/index.js';
import { Prng } from '../server/gpu/sim/prng.js';
import { discover, STRATEGIES } from '../server/discovery/index.js';
import type { ElementName } from '../server/model/document.js';

interface Target {
  label: string;
  channel: ProbeChannel;
  /** Simulated GPU only: modelled device seconds and loads so far. */
  device?: SimulatedDevice;
  /** The native probe: starting one pinned probe process and its GPU context (the job's own start). */
  openMs?: number;
  close(): Promise<void>;
}

const options = new Command()
  .option('--backend <name>', 'native, sim, or auto (native when a GPU answers)', 'auto')
  .option('--model <id>', 'simulated GPU model', 'h100-sxm5-80gb')
  .option('--probe <path>', 'the topod-probe executable (native; default the built one)')
  .option('--out <file>', 'write the phases, elements (values and confidences) and warnings as JSON')
  .option('--trace <file>', 'write one JSON line per probe operation (phase, op, its size, wall ms) to this file')
  .option(
    '--only <elements>',
    'a selective probe: these elements only, comma-separated (as POST /v1/gpus/{id}/probe takes them)',
    (value) => value.split(',').map((name) => name.trim()),
  )
  .parse()
  .opts<{ backend: string; model: string; only?: string[]; trace?: string; probe?: string; out?: string }>();

async function pickTarget(): Promise<Target> {
  if (options.backend !== 'sim') {
    const native = options.probe ? { probePath: options.probe } : {};
    const check = await NativeBackend.available(native);
    if (check.ok) {
      const backend = new NativeBackend(native);
      const gpu = (await backend.listDevices())[0]!;
      // What a probe job pays: the daemon lists its GPUs once at boot, then opens one pinned probe per job.
      const openBegan = performance.now();
      const channel = await backend.open(gpu);
      const openMs = performance.now() - openBegan;
      return {
        label: `native topod-probe ${backend.probeVersion} on ${gpu.name} (${gpu.uuid})`,
        channel,
        openMs,
        close: async () => (await channel.close(), await backend.close()),
      };
    }
    if (options.backend === 'native') throw new Error(`no native probe: ${check.reason}`);
    console.log(`[bench] no native probe (${check.reason}): the SIMULATED GPU instead`);
  }
  const model = modelById(options.model);
  if (!model) throw new Error(`unknown model ${options.model}`);
  const device = new SimulatedDevice(model, new Prng(1));
  const channel = new SimulatedChannel(new SimulatedProbe(device, { index: 0, uuid: 'GPU-bench', name: model.name, pciBusId: null }));
  return {
    label: `SIMULATED ${model.id} — wall times are the simulator's, device times are modelled`,
    channel,
    device,
    close: () => channel.close(),
  };
}

interface PhaseCost {
  wallMs: number;
  ops: number;
  deviceS: number;
  loads: number;
}

const startBegan = performance.now();
const target = await pickTarget();
const startMs = performance.now() - startBegan;
const strategyNames = new Set(STRATEGIES.map((strategy) => strategy.name));
const costs = new Map<string, PhaseCost>();
let phase = 'hello';
let phaseStart = performance.now();
let deviceAtStart = target.device?.simulatedDeviceSeconds() ?? 0;
let loadsAtStart = target.device?.loadCount ?? 0;
let ops = 0;
const closePhase = () => {
  const cost = costs.get(phase) ?? { wallMs: 0, ops: 0, deviceS: 0, loads: 0 };
  cost.wallMs += performance.now() - phaseStart;
  cost.ops += ops;
  cost.deviceS += (target.device?.simulatedDeviceSeconds() ?? 0) - deviceAtStart;
  cost.loads += (target.device?.loadCount ?? 0) - loadsAtStart;
  costs.set(phase, cost);
};
const counting: ProbeChannel = {
  request: async (op, args, requestOptions) => {
    ops += 1;
    const began = performance.now();
    const result = await target.channel.request(op, args, requestOptions);
    traced.push({ phase, op, ...operationSize(args), wallMs: Number((performance.now() - began).toFixed(3)) });
    return result;
  },
  close: () => target.channel.close(),
};

const traced: object[] = [];

/** What an operation walks, for the trace: chasers, their bytes, timed loads and stride. */
function operationSize(args: unknown): Record<string, number> {
  const fields = (args ?? {}) as { arrayBytesList?: number[]; arrayBytes?: number; samples?: number; strideBytes?: number };
  const list = fields.arrayBytesList ?? (fields.arrayBytes === undefined ? [] : [fields.arrayBytes]);
  const size: Record<string, number> = { chasers: list.length, arrayBytes: list.reduce((total, bytes) => total + bytes, 0) };
  if (fields.samples !== undefined) size.samples = fields.samples;
  if (fields.strideBytes !== undefined) size.strideBytes = fields.strideBytes;
  return size;
}

const started = performance.now();
const outcome = await discover(counting, {
  only: (options.only as ElementName[] | undefined) ?? null,
  onProgress: (name) => {
    // Rounds inside a strategy report their own names: charge them to the strategy that runs.
    const next = strategyNames.has(name) || ['hello', 'calibrate', 'analysis', 'done'].includes(name) ? name : phase;
    if (next === phase) return;
    closePhase();
    phase = next;
    phaseStart = performance.now();
    deviceAtStart = target.device?.simulatedDeviceSeconds() ?? 0;
    loadsAtStart = target.device?.loadCount ?? 0;
    ops = 0;
  },
});
const totalMs = performance.now() - started;
await target.close();

console.log(`bench:probe — ${target.label}${options.only ? ` — only ${options.only.join(', ')}` : ''}`);
console.log(`phase        wall ms   ops${target.device ? '   device ms (modelled)   loads' : ''}`);
const jobStartMs = target.openMs ?? startMs;
console.log(
  `${'start'.padEnd(10)} ${jobStartMs.toFixed(0).padStart(9)}     0   (the probe process and its GPU context, as a probe job starts it${target.openMs === undefined ? '' : `; the bench's own GPU listing before it took ${(startMs - target.openMs).toFixed(0)} ms more`})`,
);
for (const [name, cost] of costs) {
  if (name === 'done') continue;
  const simulated = target.device ? `   ${(cost.deviceS * 1000).toFixed(1).padStart(20)}   ${String(cost.loads).padStart(9)}` : '';
  console.log(`${name.padEnd(10)} ${cost.wallMs.toFixed(0).padStart(9)} ${String(cost.ops).padStart(5)}${simulated}`);
}
const all = [...costs.values()];
const sum = (pick: (c: PhaseCost) => number) => all.reduce((total, cost) => total + pick(cost), 0);
const simulatedTotal = target.device
  ? `   ${(sum((c) => c.deviceS) * 1000).toFixed(1).padStart(20)}   ${String(sum((c) => c.loads)).padStart(9)}`
  : '';
console.log(
  `${'total'.padEnd(10)} ${totalMs.toFixed(0).padStart(9)} ${String(sum((c) => c.ops)).padStart(5)}${simulatedTotal}   (discovery; with the start: ${(totalMs + jobStartMs).toFixed(0)} ms)`,
);
console.log(`elements: ${Object.keys(outcome.elements).join(', ')}; raw series ${outcome.raw.length}; warnings ${outcome.warnings.length}`);
for (const warning of outcome.warnings) console.log(`warning: ${warning}`);
if (options.trace) writeFileSync(options.trace, traced.map((line) => JSON.stringify(line)).join('\n') + '\n');
if (options.out) {
  const phases = Object.fromEntries(
    [...costs].filter(([name]) => name !== 'done').map(([name, cost]) => [name, { wallMs: Math.round(cost.wallMs), ops: cost.ops }]),
  );
  writeFileSync(
    options.out,
    JSON.stringify(
      {
        target: target.label,
        startMs: Math.round(jobStartMs),
        totalMs: Math.round(totalMs),
        phases,
        elements: outcome.elements,
        warnings: outcome.warnings,
      },
      null,
      1,
    ),
  );
}
