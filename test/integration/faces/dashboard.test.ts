/**
 * The dashboard in a real browser: Debian's headless Chromium driven by
 * puppeteer-core, against a real daemon (simulated GPU, fake NVML with a
 * mixed MIG layout). The page lists the GPU and its MIG devices and draws its
 * picture (SM colours marked illustrative), follows a MIG change made to the
 * fake-NVML scenario, says where each L2 share comes from, opens a MIG
 * device, shows the recent events on load, a running probe's progress, a
 * probe waiting while another process uses the GPU (with the reason), a
 * result measured anyway with a visible note and its conditions, and a stale
 * result's and warnings' notes. It fits an 800 px and a 1400 px wide window
 * (no sideways scrolling, the header whole, the picture at its own size) and
 * logs no console error. A second daemon with two GPUs draws the node view:
 * nvidia-smi topo -m's matrix, NUMA nodes holding their GPUs, the agreement.
 * Screenshots go to test-output/dashboard*.png.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'puppeteer-core';
import { formatBytes } from '../../../server/faces/documents.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { profileLabel } from '../../../server/faces/metrics.js';
import type { DaemonProcess } from '../../helpers/daemon-process.js';
import { startFakeNvmlDaemon, useFakeNvmlProbedDatabase, writeScenario } from '../../helpers/fake-nvml-daemon.js';
import { eventually, getJson } from '../../helpers/http.js';
import { assertNativeBuilt } from '../nvml/fake-nvml.js';

const CHROMIUM = '/usr/bin/chromium';
const HAVE_CHROMIUM = existsSync(CHROMIUM);
const OUT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test-output');
const scenarioFixture = () => JSON.parse(readFileSync('test/fixtures/nvml/h100-80gb-mig-mixed.json', 'utf8')) as Record<string, any>;

async function launch(): Promise<Browser> {
  const puppeteer = await import('puppeteer-core');
  return puppeteer.default.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
}

/** Every console error, uncaught exception and failed request (4xx/5xx included) a page meets. */
function recordErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()} (${message.location().url ?? ''})`);
  });
  page.on('pageerror', (error) => errors.push(`page: ${String(error)}`));
  page.on('requestfailed', (request) => {
    // An event stream cut by navigation is no error of the page.
    if (!request.url().includes('/v1/events')) errors.push(`request failed: ${request.url()} ${request.failure()?.errorText ?? ''}`);
  });
  page.on('response', (response) => {
    if (response.status() >= 400) errors.push(`HTTP ${response.status()}: ${response.url()}`);
  });
  return errors;
}

/** What makes a layout fit a window: no sideways scrolling, the header whole and in view, the picture at its own size. */
async function layoutAt(
  page: Page,
  width: number,
): Promise<{
  scrollWidth: number;
  header: { left: number; right: number; top: number; height: number };
  pill: { right: number; visible: boolean };
  pictureScale: number | null;
}> {
  await page.setViewport({ width, height: 1000 });
  // A view change swaps the picture's blob; its size is known only once the new one is decoded.
  await page.waitForFunction(
    () => {
      const img = document.querySelector<HTMLImageElement>('#picture');
      return img === null || !img.getAttribute('src') || (img.complete && img.naturalWidth > 0);
    },
    { timeout: 20_000 },
  );
  return page.evaluate(() => {
    const box = (selector: string) => document.querySelector(selector)!.getBoundingClientRect();
    const header = box('header');
    const pill = box('#connection');
    const img = document.querySelector<HTMLImageElement>('#picture');
    const shown = img && img.naturalWidth > 0 && img.offsetParent !== null;
    return {
      scrollWidth: Math.max(document.documentElement.scrollWidth, document.body.scrollWidth),
      header: { left: header.left, right: header.right, top: header.top, height: header.height },
      pill: { right: pill.right, visible: pill.width > 0 && pill.height > 0 },
      pictureScale: shown ? img.getBoundingClientRect().width / img.naturalWidth : null,
    };
  });
}

function expectFits(layout: Awaited<ReturnType<typeof layoutAt>>, width: number): void {
  expect(layout.scrollWidth, 'page wider than the window').toBeLessThanOrEqual(width);
  expect(layout.header.left).toBeGreaterThanOrEqual(0);
  expect(layout.header.right).toBeLessThanOrEqual(width);
  expect(layout.header.top).toBe(0);
  expect(layout.pill.visible).toBe(true);
  expect(layout.pill.right).toBeLessThanOrEqual(width);
}

describe.skipIf(!HAVE_CHROMIUM)('dashboard in headless Chromium', () => {
  let dir: string;
  let daemon: DaemonProcess;
  let browser: Browser;
  let page: Page;
  let scenarioPath: string;
  let errors: string[] = [];

  beforeAll(async () => {
    assertNativeBuilt();
    dir = mkdtempSync(path.join(tmpdir(), 'topod-dashboard-'));
    scenarioPath = path.join(dir, 'scenario.json');
    writeScenario(scenarioPath, scenarioFixture());
    daemon = await startFakeNvmlDaemon(dir, scenarioPath, 200);
    await eventually(
      () => getJson(`${daemon.baseUrl}/v1/gpus/0/topology`),
      (r) => r.status === 200,
      120_000,
      250,
    );
    browser = await launch();
    page = await browser.newPage();
    errors = recordErrors(page);
    await page.setViewport({ width: 1400, height: 1100 });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await daemon?.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists the GPU and draws its topology picture', async () => {
    const { body } = await getJson(`${daemon.baseUrl}/v1/gpus`);
    await page.goto(`${daemon.baseUrl}/`, { waitUntil: 'domcontentloaded' });
    await page.waitForFunction(
      (name: string) => document.querySelector('#gpus')?.textContent?.includes(name),
      { timeout: 20_000 },
      body.gpus[0].name,
    );
    await page.waitForFunction(
      () => {
        const img = document.querySelector<HTMLImageElement>('#picture');
        return img !== null && img.complete && img.naturalWidth > 0;
      },
      { timeout: 20_000 },
    );
    expect(await page.$eval('#picture', (img) => (img as HTMLImageElement).naturalWidth)).toBe(960);
    await page.waitForFunction(() => document.querySelector('#connection')?.textContent === 'live', { timeout: 20_000 });
    // NVML does not say which SMs a GPU instance holds: the picture's colouring is marked as illustrative.
    expect(await page.$eval('#picture-note', (el) => ((el as HTMLElement).hidden ? '' : el.textContent))).toMatch(
      /^SM colours are illustrative/,
    );
    const svg = await (await fetch(`${daemon.baseUrl}/v1/gpus/0/topology.svg`)).text();
    expect(svg).toContain('instance colours illustrative');
  });

  it('shows the recent events on load: the first probe, which ran before the page opened', async () => {
    await page.waitForFunction(
      () => [...document.querySelectorAll('#events li')].some((li) => li.textContent?.includes('probe.succeeded')),
      { timeout: 10_000 },
    );
    const types = await page.$$eval('#events li', (items) => items.map((li) => li.getAttribute('data-type')));
    expect(types).toContain('probe.started');
  });

  it('shows the MIG instances with their L2 shares, and follows a MIG change', async () => {
    const { body: document_ } = await getJson(`${daemon.baseUrl}/v1/gpus/0/topology`);
    const instances = document_.mig.instances as Array<{ gpuInstanceId: number; profileName: string }>;
    await page.waitForFunction(
      (n: number) => document.querySelectorAll('#mig tbody tr').length === n,
      { timeout: 20_000 },
      instances.length,
    );
    const rows = await page.$$eval('#mig tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    expect(rows.map((r) => r[0])).toEqual(instances.map((i) => String(i.gpuInstanceId)));
    expect(rows.map((r) => r[1])).toEqual(instances.map((i) => i.profileName));
    expect(profileLabel(instances[0]!.profileName)).not.toBe(instances[0]!.profileName);
    // The share is always computed (L2 × slices ÷ the GPU's slices); the column says from what.
    const sliceCount = document_.mig.memorySliceCount as number;
    expect(rows.map((r) => r[6])).toEqual(
      (document_.mig.instances as Array<{ l2: { memorySlices: number; source: string } }>).map(
        (i) =>
          `derived: L2 × ${i.l2.memorySlices}/${sliceCount} slices, ${i.l2.source === 'nvml' ? 'from NVML placement' : 'estimated from memory size'}`,
      ),
    );
    expect(rows.map((r) => r[4])).toEqual(
      (document_.mig.instances as Array<{ l2: { bytes: number } }>).map((i) => formatBytes(i.l2.bytes)),
    );

    // Destroy the last GPU instance in the fake NVML scenario: the page drops its row on mig.changed.
    const scenario = scenarioFixture();
    const removed = scenario['devices'][0].gpuInstances.pop();
    writeScenario(scenarioPath, scenario);
    await page.waitForFunction(
      (n: number) => document.querySelectorAll('#mig tbody tr').length === n,
      { timeout: 20_000 },
      instances.length - 1,
    );
    const ids = await page.$$eval('#mig tbody tr', (trs) => trs.map((tr) => tr.getAttribute('data-gpu-instance-id')));
    expect(ids).not.toContain(String(removed.id));
    await page.waitForFunction(() => [...document.querySelectorAll('#events li')].some((li) => li.textContent?.includes('mig.changed')), {
      timeout: 10_000,
    });
  });

  it('lists each MIG device under its GPU and opens one: its SMs, memory and L2 share', async () => {
    const { body: gpu } = await getJson(`${daemon.baseUrl}/v1/gpus/0`);
    await page.waitForFunction(
      (n: number) => document.querySelectorAll('#gpus li.mig').length === n,
      { timeout: 20_000 },
      gpu.migDeviceUuids.length,
    );
    const uuid = gpu.migDeviceUuids[0] as string;
    const { body: mig } = await getJson(`${daemon.baseUrl}/v1/gpus/${uuid}`);
    await page.click(`#gpus li.mig[data-uuid="${uuid}"] a`);
    await page.waitForFunction(() => !document.querySelector<HTMLElement>('#mig-device')!.hidden, { timeout: 20_000 });
    expect(await page.$eval('#gpu-title', (el) => el.textContent)).toContain(uuid);
    expect(await page.$eval(`#gpus li.mig[data-uuid="${uuid}"]`, (el) => el.classList.contains('selected'))).toBe(true);
    const facts = await page.$$eval('#mig-device-facts dt, #mig-device-facts dd', (items) => items.map((el) => el.textContent));
    const fact = (term: string) => facts[facts.indexOf(term) + 1];
    expect(fact('L2 share')).toBe(
      `${formatBytes(mig.l2.bytes)} (derived: L2 slices, ${mig.l2.source === 'nvml' ? 'from NVML placement' : 'estimated from memory size'})`,
    );
    expect(fact('SMs')).toBe(String(mig.multiprocessorCount));
    expect(await page.$eval('#mig-card', (el) => (el as HTMLElement).hidden)).toBe(true);
    expect(await page.$$eval('#elements tbody tr', (rows) => rows.length)).toBeGreaterThan(0);
    expect(await page.$eval('#picture-note', (el) => el.textContent)).toContain(`this device is GI ${mig.gpuInstanceId}`);
    // Back to the whole GPU, as the rest of this file expects.
    await page.click(`#gpus li.gpu a`);
    await page.waitForFunction(
      () => document.querySelector<HTMLElement>('#mig-device')!.hidden && !document.querySelector<HTMLElement>('#mig-card')!.hidden,
      { timeout: 20_000 },
    );
    // The GPU's own picture replaces the MIG device's after the document is shown.
    await page.waitForFunction(
      (href: string) => document.querySelector('#picture-link')!.getAttribute('href') === href,
      { timeout: 20_000 },
      `/v1/gpus/${encodeURIComponent(gpu.uuid)}/topology.svg`,
    );
  });

  it('fits a 1400 px and an 800 px wide window: no sideways scrolling, the header whole, the picture at its own size', async () => {
    mkdirSync(OUT, { recursive: true });
    const wide = await layoutAt(page, 1400);
    expectFits(wide, 1400);
    expect(wide.pictureScale).toBeCloseTo(1, 2);
    // At 1400 px the picture fits its card whole, no scrolling.
    expect(await page.$eval('#picture-link', (el) => el.scrollWidth <= el.clientWidth)).toBe(true);
    await page.screenshot({ path: path.join(OUT, 'dashboard-1400.png'), fullPage: true });

    const narrow = await layoutAt(page, 800);
    expectFits(narrow, 800);
    // The picture keeps its own size (its 11–13 px text readable) and scrolls inside its card.
    expect(narrow.pictureScale).toBeCloseTo(1, 2);
    await page.screenshot({ path: path.join(OUT, 'dashboard-800.png'), fullPage: true });
    await page.goto(`${daemon.baseUrl}/#/node`, { waitUntil: 'domcontentloaded' });
    await page.waitForFunction(() => document.querySelectorAll('#topo-matrix td').length > 0, { timeout: 20_000 });
    expectFits(await layoutAt(page, 800), 800);
    await page.screenshot({ path: path.join(OUT, 'dashboard-node-800.png'), fullPage: true });
    await page.setViewport({ width: 1400, height: 1100 });
    await page.goto(`${daemon.baseUrl}/`, { waitUntil: 'domcontentloaded' });
    await page.waitForFunction(
      () => document.querySelector('#connection')?.textContent === 'live' && document.querySelectorAll('#mig tbody tr').length > 0,
      { timeout: 20_000 },
    );
  });

  it('shows a stale result’s note, the analysis warnings and every measurement condition', async () => {
    const { body: document_ } = await getJson(`${daemon.baseUrl}/v1/gpus/0/topology`);
    const other = await browser.newPage();
    const otherErrors = recordErrors(other);
    try {
      await other.setRequestInterception(true);
      const stale = {
        ...document_,
        status: { ...document_.status, stale: true, staleReason: 'measured under driver 570.86.15; this GPU now runs 580.95.05' },
        warnings: ['l2.segment: the near/far split is a guess', 'texture: fewer samples than asked'],
      };
      other.on('request', (request) => {
        if (new URL(request.url()).pathname === `/v1/gpus/${document_.gpu.uuid}/topology`) {
          void request.respond({ status: 200, contentType: 'application/json', body: JSON.stringify(stale) });
        } else {
          void request.continue();
        }
      });
      await other.goto(`${daemon.baseUrl}/#/gpu/${document_.gpu.uuid}`, { waitUntil: 'domcontentloaded' });
      await other.waitForFunction(() => !document.querySelector<HTMLElement>('#stale')!.hidden, { timeout: 20_000 });
      expect(await other.$eval('#stale', (el) => el.textContent)).toBe(
        `⚠ stale: ${stale.status.staleReason} — a re-probe is queued; this result is served meanwhile`,
      );
      expect(await other.$$eval('#warnings li', (items) => items.map((li) => li.textContent))).toEqual(stale.warnings);
      expect(await other.$eval('#warnings-card', (el) => (el as HTMLElement).hidden)).toBe(false);
      const terms = await other.$$eval('#conditions-facts dt', (items) => items.map((dt) => dt.textContent));
      if (document_.conditions?.source === 'nvml')
        expect(terms).toEqual(expect.arrayContaining(['other processes', 'SM clock', 'temperature', 'power', 'ECC']));
      expect(otherErrors).toEqual([]);
    } finally {
      await other.close();
    }
    // The real document, not stale and without warnings, shows neither note.
    expect(await page.$eval('#stale', (el) => (el as HTMLElement).hidden)).toBe(!document_.status.stale);
    expect(await page.$eval('#warnings-card', (el) => (el as HTMLElement).hidden)).toBe(document_.warnings.length === 0);
  });

  it('shows a running probe’s progress and phase; writes a screenshot', async () => {
    const response = await fetch(`${daemon.baseUrl}/v1/gpus/0/probe`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ force: true }),
    });
    expect(response.status).toBe(202);
    await page.waitForFunction(
      () => {
        const progress = document.querySelector<HTMLProgressElement>('#probe-progress');
        return (
          progress !== null && !progress.hidden && progress.value > 0 && (document.querySelector('#probe-phase')?.textContent ?? '') !== ''
        );
      },
      { timeout: 60_000, polling: 50 },
    );
    const label = await page.$eval('#probe-state', (el) => el.textContent);
    expect(label).toMatch(/^probe running \d+%$/);
    mkdirSync(OUT, { recursive: true });
    await page.screenshot({ path: path.join(OUT, 'dashboard.png') });
    await page.waitForFunction(() => document.querySelector('#probe-state')?.textContent === 'probe succeeded 100%', { timeout: 90_000 });
  }, 120_000);

  it('shows a probe waiting for a busy GPU with its reason, and a result measured anyway with a visible note', async () => {
    const probe = (body: object) =>
      fetch(`${daemon.baseUrl}/v1/gpus/0/probe`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const scenario = JSON.parse(readFileSync(scenarioPath, 'utf8')) as Record<string, any>;
    scenario['devices'][0].processes = [{ pid: 48213, usedMemoryBytes: 2415919104, type: 'compute' }];
    writeScenario(scenarioPath, scenario);
    try {
      expect((await probe({ force: true, only: ['shared'] })).status).toBe(202);
      await page.waitForFunction(
        () =>
          document.querySelector('#probe-state')?.textContent === 'probe waiting for the GPU' &&
          /^gpu-busy: 1 compute process/.test(document.querySelector('#probe-phase')?.textContent ?? ''),
        { timeout: 30_000 },
      );
      expect(await page.$eval('#probe', (el) => el.classList.contains('waiting'))).toBe(true);
      await page.waitForFunction(() => document.querySelector('#gpus li')?.textContent?.endsWith('— waiting'), { timeout: 10_000 });

      expect((await probe({ force: true, evenIfBusy: true, only: ['shared'] })).status).toBe(202);
      await page.waitForFunction(
        () =>
          document.querySelector('#conditions.busy:not([hidden])')?.textContent?.startsWith('⚠ measured on a busy GPU: 1 other process'),
        { timeout: 90_000 },
      );
      expect(await page.$eval('#probe-state', (el) => el.textContent)).toBe('probe succeeded 100%');
      mkdirSync(OUT, { recursive: true });
      await page.screenshot({ path: path.join(OUT, 'dashboard-busy.png') });
    } finally {
      delete scenario['devices'][0].processes;
      writeScenario(scenarioPath, scenario);
    }
  }, 150_000);

  it('logged no console error and no failed request (the favicon included)', async () => {
    const icon = await fetch(`${daemon.baseUrl}/ui/favicon.svg`);
    expect(icon.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(await page.$eval('link[rel="icon"]', (link) => link.getAttribute('href'))).toBe('/ui/favicon.svg');
    expect(errors).toEqual([]);
  });
});

describe.skipIf(!HAVE_CHROMIUM)('node view in headless Chromium: two GPUs on two NUMA nodes, NVLinked through NVSwitch', () => {
  let dir: string;
  let daemon: DaemonProcess;
  let browser: Browser;

  beforeAll(async () => {
    assertNativeBuilt();
    dir = mkdtempSync(path.join(tmpdir(), 'topod-dashboard-node-'));
    const scenarioPath = path.join(dir, 'scenario.json');
    writeScenario(scenarioPath, JSON.parse(readFileSync('test/fixtures/nvml/two-gpu-h100.json', 'utf8')));
    await useFakeNvmlProbedDatabase(dir, 'two-gpu-h100.json');
    daemon = await startFakeNvmlDaemon(dir, scenarioPath, 200);
    await eventually(
      () => getJson(`${daemon.baseUrl}/v1/node`),
      (r) =>
        r.status === 200 &&
        r.body.gpus.length === 2 &&
        r.body.gpus.every((g: { measured: boolean }) => g.measured) &&
        r.body.links.length === 1,
      120_000,
      250,
    );
    browser = await launch();
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await daemon?.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('draws the links as nvidia-smi topo -m does, the NUMA nodes holding their GPUs as lstopo does, and the agreement', async () => {
    const { body: node } = await getJson(`${daemon.baseUrl}/v1/node`);
    const page = await browser.newPage();
    const errors = recordErrors(page);
    await page.setViewport({ width: 1400, height: 1000 });
    await page.goto(`${daemon.baseUrl}/#/node`, { waitUntil: 'domcontentloaded' });
    await page.waitForFunction(
      () => document.querySelectorAll('#topo-matrix tbody tr').length === 2 && document.querySelectorAll('#machine .gpu .mig').length > 0,
      { timeout: 20_000 },
    );
    const matrix = await page.$$eval('#topo-matrix tr', (rows) => rows.map((tr) => [...tr.children].map((cell) => cell.textContent)));
    const [a, b] = node.gpus as Array<{ uuid: string; numaNode: number; pciBusId: string }>;
    expect(matrix).toEqual([
      ['', 'GPU0', 'GPU1', 'NUMA Affinity', 'PCI bus id'],
      ['GPU0', 'X', node.links[0].topo, String(a!.numaNode), a!.pciBusId],
      ['GPU1', node.links[0].topo, 'X', String(b!.numaNode), b!.pciBusId],
    ]);
    expect(node.links[0].topo).toBe('NV4');
    // Each NUMA node's box holds the GPU attached to it; the MIG device sits inside its GPU.
    const boxes = await page.$$eval('#machine .numa', (items) =>
      items.map((box) => ({
        numa: box.getAttribute('data-numa'),
        gpus: [...box.querySelectorAll('.gpu')].map((g) => g.getAttribute('data-uuid')),
      })),
    );
    expect(boxes).toEqual([
      { numa: String(a!.numaNode), gpus: [a!.uuid] },
      { numa: String(b!.numaNode), gpus: [b!.uuid] },
    ]);
    expect(await page.$eval(`#machine .gpu[data-uuid="${b!.uuid}"] .mig a`, (link) => link.getAttribute('href'))).toMatch(/^#\/gpu\/MIG-/);
    const verdict = await page.$eval('#agreement', (el) => el.textContent);
    expect(verdict).toBe(
      node.agreement.agree
        ? 'Same-model GPUs measured alike, within the tolerances.'
        : '⚠ Same-model GPUs measured differently: see the differences below.',
    );
    expect(await page.$eval('#models', (el) => el.textContent)).toContain('2 of 2 measured');
    expect(await page.$eval('#nvlinks', (el) => el.textContent)).toBe('NVLink: GPU0 ↔ GPU1 NV4 (through NVSwitch)');
    mkdirSync(OUT, { recursive: true });
    await page.screenshot({ path: path.join(OUT, 'dashboard-node.png'), fullPage: true });
    expectFits(await layoutAt(page, 800), 800);
    // A GPU in the matrix opens its own view.
    await page.click('#topo-matrix tbody tr[data-gpu="1"] th a');
    await page.waitForFunction(
      () => !document.querySelector<HTMLElement>('#detail')!.hidden && document.querySelectorAll('#mig tbody tr').length === 1,
      { timeout: 20_000 },
    );
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});

describe.skipIf(HAVE_CHROMIUM)('dashboard in headless Chromium', () => {
  it(`skipped: ${CHROMIUM} is not installed (apt-get install chromium; .ci/run installs it)`, () => {
    expect(HAVE_CHROMIUM).toBe(false);
  });
});
