#!/usr/bin/env node
// A stand-in topod-probe for transport tests: speaks the JSON-lines protocol
// and misbehaves on request. args.behave: "garbage" (noise lines before the
// answer), "crash" (exit 1 mid-request), "hang" (never answer), "null-id"
// (answer with id null), "error" (answer ok:false with args.code).
// STUB_DEVICES: how many devices hello lists (default 2); CUDA_VISIBLE_DEVICES
// set to a UUID narrows the list to that device, as the CUDA runtime does.
import { createInterface } from 'node:readline';

if (process.argv.includes('--version')) {
  console.log('topod-probe 9.9.9-stub (protocol 1, nvidia)');
  process.exit(0);
}

const count = Number(process.env.STUB_DEVICES ?? 2);
const all = Array.from({ length: count }, (_, i) => ({
  index: i,
  uuid: `GPU-0000000${i}-0000-0000-0000-000000000000`,
  name: 'Stub GPU',
  pciBusId: `00000000:0${i}:00.0`,
  architecture: 'sm_90',
}));
const pinned = process.env.CUDA_VISIBLE_DEVICES;
const devices = pinned ? all.filter((d) => d.uuid === pinned).map((d) => ({ ...d, index: 0 })) : all;

// What this stub answers (besides the misbehaviours): hello lists it, as the real probe lists its registry.
const STUB_OPS = ['hello', 'echo', 'pchase'];

const send = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`);
process.stderr.write(`stub probe ${process.pid} started\n`);

createInterface({ input: process.stdin }).on('line', (line) => {
  let req;
  try {
    req = JSON.parse(line);
  } catch {
    send({ id: null, ok: false, error: { code: 'bad_request', message: 'malformed JSON' } });
    return;
  }
  const args = req.args ?? {};
  switch (args.behave) {
    case 'garbage':
      process.stdout.write('not json at all\n{"half":\n[1,2,3]\n{"id":"x","ok":true}\n\n');
      break;
    case 'crash':
      process.stderr.write('stub: simulated kernel fault\n');
      process.exit(1);
      return;
    case 'hang':
      return;
    case 'null-id':
      send({ id: null, ok: false, error: { code: 'bad_request', message: 'could not read id' } });
      return;
    case 'error':
      send({ id: req.id, ok: false, error: { code: args.code ?? 'internal', message: `stub error ${args.code}` } });
      return;
  }
  if (req.op === 'hello') {
    send({
      id: req.id,
      ok: true,
      result: {
        probeVersion: '9.9.9-stub',
        protocolVersion: 1,
        vendor: 'nvidia',
        runtimeVersion: 13000,
        driverVersion: 13000,
        ops: STUB_OPS,
        devices,
      },
    });
  } else if (req.op === 'echo' || req.op === 'pchase') {
    send({ id: req.id, ok: true, result: { pid: process.pid, args } });
  } else {
    send({ id: req.id, ok: false, error: { code: 'unknown_op', message: `unknown op ${req.op}` } });
  }
});
