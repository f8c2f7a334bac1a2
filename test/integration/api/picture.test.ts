/**
 * GET /v1/gpus/{id}/topology.svg: byte-exact golden files of the H100 result
 * as it was recorded (test/fixtures/h100/discovery-run.json, the stored
 * document — frozen, so a newer analysis does not move the picture), with
 * MIG off and with fake NVML's mixed layout; every element of a simulated
 * discovery drawn; each picture rendered to PNG by resvg, which proves it is
 * valid SVG. Regenerate the golden files with UPDATE_GOLDEN=1 after a
 * deliberate change of the drawing.
 */
import { Resvg } from '@resvg/resvg-js';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { elementEntries, elementLabel } from '../../../server/faces/documents.js';
import { escapeXml, topologySvg } from '../../../server/faces/svg.js';
import type { ResultDocument } from '../../../server/model/document.js';
import { DocumentTopology, mergedGpu, recordedH100Run, simulatedH100Result } from '../../helpers/face-documents.js';
import { buildTestApp, PROBLEM_TYPE, type TestApp } from './harness.js';

const GOLDEN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/faces');
const OUT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test-output');

/** The stored document of the recorded run, exactly as the daemon stored it then. */
const recordedAsStored = () => recordedH100Run().document as unknown as ResultDocument;

function render(svg: string): { width: number; height: number; png: Buffer } {
  const image = new Resvg(svg, { font: { loadSystemFonts: true } }).render();
  return { width: image.width, height: image.height, png: image.asPng() };
}

function golden(name: string, svg: string): void {
  const file = path.join(GOLDEN, name);
  if (process.env['UPDATE_GOLDEN'] === '1' || !existsSync(file)) {
    mkdirSync(GOLDEN, { recursive: true });
    writeFileSync(file, svg);
  }
  expect(svg, `${name} differs from the golden file; run with UPDATE_GOLDEN=1 if the change is meant`).toBe(readFileSync(file, 'utf8'));
}

describe('topology picture', () => {
  let t: TestApp | undefined;
  afterEach(async () => t?.app.close());

  it.each([
    ['h100-recorded-mig-off.svg', 'h100-80gb-mig-off.json'],
    ['h100-recorded-mig-mixed.svg', 'h100-80gb-mig-mixed.json'],
  ])('%s matches its golden file byte for byte and renders', (name, scenario) => {
    const { merged } = mergedGpu(recordedAsStored(), scenario);
    const svg = topologySvg(merged);
    expect(topologySvg(merged)).toBe(svg);
    golden(name, svg);
    const { width, height, png } = render(svg);
    expect(width).toBe(960);
    expect(height).toBeGreaterThan(300);
    mkdirSync(OUT, { recursive: true });
    writeFileSync(path.join(OUT, name.replace(/\.svg$/, '.png')), png);
  });

  it('MIG on: each GPU instance with its profile, SMs and L2 share from the document', () => {
    const { merged } = mergedGpu(recordedAsStored(), 'h100-80gb-mig-mixed.json');
    const svg = topologySvg(merged);
    const instances = merged.mig!.instances;
    expect(instances.length).toBeGreaterThan(1);
    for (const instance of instances) {
      expect(svg).toContain(escapeXml(`GI ${instance.gpuInstanceId} · ${instance.profileName} · ${instance.multiprocessorCount} SMs`));
    }
  });

  it('draws the SMs by measured GPC, with the TPCs of unknown GPC apart, coloured by GPU instance with MIG on', async () => {
    const { merged } = mergedGpu(await simulatedH100Result(), 'h100-80gb-mig-mixed.json');
    const gpcs = merged.compute!.gpcs!;
    const svg = topologySvg(merged);
    expect(svg).toContain(`— ${gpcs.count.value} GPCs (measured from cluster placements)</text>`);
    for (const [i, sms] of gpcs.smIds.entries()) expect(svg).toContain(`>GPC ${i} · ${sms.length} SMs</text>`);
    expect(gpcs.tpcsOfUnknownGpc.length).toBeGreaterThan(0);
    expect(svg).toContain(`>${gpcs.tpcsOfUnknownGpc.length} TPCs, GPC unknown</text>`);
    // one square per SM, whichever row it is drawn in
    const squares = svg.match(/<rect [^>]*width="18" height="18"/g) ?? [];
    expect(squares.length).toBeGreaterThanOrEqual(merged.device.multiprocessorCount!);
    expect(render(svg).width).toBe(960);
  }, 120_000); // the first test to ask runs the whole simulated discovery

  it('draws every element a simulated discovery measures, with sizes in KiB/MiB and latencies in cycles and ns', async () => {
    const { merged } = mergedGpu(await simulatedH100Result(), 'h100-80gb-mig-off.json');
    const svg = topologySvg(merged);
    for (const [name, element] of elementEntries(merged)) {
      expect(svg, name).toContain(`>${escapeXml(elementLabel(name))}</text>`);
      if (element.latency?.meanNs !== undefined) expect(svg).toMatch(new RegExp(`${Math.round(element.latency.mean)} cy \\(`));
    }
    expect(svg).toMatch(/\d+(\.\d+)? (KiB|MiB)/);
    const { width, png } = render(svg);
    expect(width).toBe(960);
    mkdirSync(OUT, { recursive: true });
    writeFileSync(path.join(OUT, 'h100-simulated.png'), png);
  }, 120_000);

  it('is served as image/svg+xml with an ETag; If-None-Match gives 304; a MIG UUID draws its parent', async () => {
    const gpu = mergedGpu(recordedAsStored(), 'h100-80gb-mig-mixed.json');
    t = await buildTestApp({ topology: new DocumentTopology([gpu]) });
    const res = await t.app.inject({ method: 'GET', url: '/v1/gpus/0/topology.svg' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/svg+xml; charset=utf-8');
    expect(res.body).toBe(topologySvg(gpu.merged));
    const again = await t.app.inject({
      method: 'GET',
      url: '/v1/gpus/0/topology.svg',
      headers: { 'if-none-match': String(res.headers.etag) },
    });
    expect(again.statusCode).toBe(304);
    const viaMig = await t.app.inject({ method: 'GET', url: `/v1/gpus/${gpu.migUuids[0]}/topology.svg` });
    expect(viaMig.body).toBe(res.body);
    const missing = await t.app.inject({ method: 'GET', url: '/v1/gpus/5/topology.svg' });
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['content-type']).toMatch(PROBLEM_TYPE);
  });
});
