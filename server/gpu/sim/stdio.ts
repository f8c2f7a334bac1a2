/**
 * The simulated GPU behind the probe's JSON-lines protocol on stdin/stdout,
 * so the native-probe client can be tested against it without a GPU:
 *
 *   tsx server/gpu/sim/stdio.ts --model h100-sxm5-80gb [--seed 42] [--index 0]
 *
 * One request per line in, one response per line out, in order; logs on stderr.
 */
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { ProbeError } from '../../protocol/probe-error.js';
import type { ProbeResponse } from '../../protocol/ops.js';
import { WorkSlicer } from './chase.js';
import { GPU_MODELS, modelById } from './models/index.js';
import { Prng, randomSeed } from './prng.js';
import { SimulatedDevice } from './simulated-device.js';
import { SimulatedProbe } from './simulated-probe.js';
import { simulatedGpuUuid } from './uuid.js';

function fail(message: string): never {
  process.stderr.write(`topod-sim: ${message}\n`);
  process.exit(2);
}

/** Parses one request line and answers it; never throws. */
export async function answerLine(probe: SimulatedProbe, line: string): Promise<ProbeResponse> {
  let id: number | null = null;
  try {
    const request: unknown = JSON.parse(line);
    if (typeof request !== 'object' || request === null) throw new ProbeError('bad_request', 'a request must be a JSON object');
    const fields = request as Record<string, unknown>;
    if (typeof fields.id === 'number' && Number.isSafeInteger(fields.id) && fields.id >= 0) id = fields.id;
    else throw new ProbeError('bad_request', 'id must be a non-negative integer');
    if (typeof fields.op !== 'string') throw new ProbeError('bad_request', 'op must be a string');
    const result = await probe.handle(fields.op, fields.args === undefined ? {} : fields.args, new WorkSlicer(undefined));
    return { id, ok: true, result };
  } catch (error) {
    if (error instanceof SyntaxError) return { id, ok: false, error: { code: 'bad_request', message: `malformed JSON: ${error.message}` } };
    if (error instanceof ProbeError) return { id, ok: false, error: { code: error.code as 'bad_request', message: error.message } };
    return { id, ok: false, error: { code: 'internal', message: error instanceof Error ? error.message : String(error) } };
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { model: { type: 'string' }, seed: { type: 'string' }, index: { type: 'string', default: '0' } },
  });
  const model = modelById(values.model ?? '') ?? fail(`--model must be one of ${Object.keys(GPU_MODELS).join(', ')}`);
  const index = Number(values.index);
  const seed = values.seed === undefined ? randomSeed() : Number(values.seed) >>> 0;
  const identity = { index, uuid: simulatedGpuUuid(model.id, index), name: model.name, pciBusId: null };
  const probe = new SimulatedProbe(new SimulatedDevice(model, new Prng(seed)), identity);
  process.stderr.write(`topod-sim: ${model.id} ready (seed ${seed})\n`);

  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === '') continue;
    process.stdout.write(`${JSON.stringify(await answerLine(probe, line))}\n`);
  }
}

await main();
