/**
 * The dashboard in a real browser: Debian's headless Chromium driven by
 * puppeteer-core, against a real daemon (simulated GPU, fake NVML with a
 * mixed MIG layout). The page lists the GPU and draws its picture, follows a
 * MIG change made to the fake-NVML scenario, shows a running probe's
 * progress, a probe waiting while another process uses the GPU (with the
 * reason), and a result measured anyway with a visible note; screenshots are
 * written to test-output/dashboard.png and dashboard-busy.png.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { profileLabel } from '../../../server/faces/metrics.js';
import type { DaemonProcess } from '../../helpers/daemon-process.js';
import { startFakeNvmlDaemon, writeScenario } from '../../helpers/fake-nvml-daemon.js';
import { eventually, getJson } from '../../helpers/http.js';
import { assertNativeBuilt } from '../nvml/fake-nvml.js';

const CHROMIUM = '/usr/bin/chromium';
const HAVE_CHROMIUM = existsSync(CHROMIUM);
const OUT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test-output');
const scenarioFixture = () => JSON.parse(readFileSync('test/fixtures/nvml/h100-80gb-mig-mixed.json', 'utf8')) as Record<string, any>;

describe.skipIf(!HAVE_CHROMIUM)('dashboard in headless Chromium', () => {
  let dir: string;
  let daemon: DaemonProcess;
  let browser: Browser;
  let page: Page;
  let scenarioPath: string;

  beforeAll(async () => {
    assertNativeBuilt();
    dir = mkdtempSync(path.join(tmpdir(), 'topod-dashboard-'));
    scenarioPath = path.join(dir, 'scenario.json');
    writeScenario(scenarioPath, scenarioFixture());
    daemon = await startFakeNvmlDaemon(dir, scenarioPath, 200);
    await eventually(() => getJson(`${daemon.baseUrl}/v1/gpus/0/topology`), (r) => r.status === 200, 120_000, 250);
    const puppeteer = await import('puppeteer-core');
    browser = await puppeteer.default.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
    page = await browser.newPage();
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
    await page.waitForFunction((name: string) => document.querySelector('#gpus')?.textContent?.includes(name), { timeout: 20_000 }, body.gpus[0].name);
    await page.waitForFunction(() => {
      const img = document.querySelector<HTMLImageElement>('#picture');
      return img !== null && img.complete && img.naturalWidth > 0;
    }, { timeout: 20_000 });
    expect(await page.$eval('#picture', (img) => (img as HTMLImageElement).naturalWidth)).toBe(960);
    await page.waitForFunction(() => document.querySelector('#connection')?.textContent === 'live', { timeout: 20_000 });
  });

  it('shows the MIG instances with their L2 shares, and follows a MIG change', async () => {
    const { body: document_ } = await getJson(`${daemon.baseUrl}/v1/gpus/0/topology`);
    const instances = document_.mig.instances as Array<{ gpuInstanceId: number; profileName: string }>;
    await page.waitForFunction((n: number) => document.querySelectorAll('#mig tbody tr').length === n, { timeout: 20_000 }, instances.length);
    const rows = await page.$$eval('#mig tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    expect(rows.map((r) => r[0])).toEqual(instances.map((i) => String(i.gpuInstanceId)));
    expect(rows.map((r) => r[1])).toEqual(instances.map((i) => i.profileName));
    expect(profileLabel(instances[0]!.profileName)).not.toBe(instances[0]!.profileName);

    // Destroy the last GPU instance in the fake NVML scenario: the page drops its row on mig.changed.
    const scenario = scenarioFixture();
    const removed = scenario['devices'][0].gpuInstances.pop();
    writeScenario(scenarioPath, scenario);
    await page.waitForFunction((n: number) => document.querySelectorAll('#mig tbody tr').length === n, { timeout: 20_000 }, instances.length - 1);
    const ids = await page.$$eval('#mig tbody tr', (trs) => trs.map((tr) => tr.getAttribute('data-gpu-instance-id')));
    expect(ids).not.toContain(String(removed.id));
    await page.waitForFunction(() => [...document.querySelectorAll('#events li')].some((li) => li.textContent?.includes('mig.changed')), { timeout: 10_000 });
  });

  it('shows a running probe’s progress and phase; writes a screenshot', async () => {
    const response = await fetch(`${daemon.baseUrl}/v1/gpus/0/probe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ force: true }) });
    expect(response.status).toBe(202);
    await page.waitForFunction(
      () => {
        const progress = document.querySelector<HTMLProgressElement>('#probe-progress');
        return progress !== null && !progress.hidden && progress.value > 0 && (document.querySelector('#probe-phase')?.textContent ?? '') !== '';
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
    const probe = (body: object) => fetch(`${daemon.baseUrl}/v1/gpus/0/probe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const scenario = JSON.parse(readFileSync(scenarioPath, 'utf8')) as Record<string, any>;
    scenario['devices'][0].processes = [{ pid: 48213, usedMemoryBytes: 2415919104, type: 'compute' }];
    writeScenario(scenarioPath, scenario);
    try {
      expect((await probe({ force: true, only: ['shared'] })).status).toBe(202);
      await page.waitForFunction(
        () => document.querySelector('#probe-state')?.textContent === 'probe waiting for the GPU' && /^gpu-busy: 1 compute process/.test(document.querySelector('#probe-phase')?.textContent ?? ''),
        { timeout: 30_000 },
      );
      expect(await page.$eval('#probe', (el) => el.classList.contains('waiting'))).toBe(true);
      await page.waitForFunction(() => document.querySelector('#gpus li')?.textContent?.endsWith('— waiting'), { timeout: 10_000 });

      expect((await probe({ force: true, evenIfBusy: true, only: ['shared'] })).status).toBe(202);
      await page.waitForFunction(() => document.querySelector('#conditions.busy:not([hidden])')?.textContent?.startsWith('⚠ measured on a busy GPU: 1 other process'), { timeout: 90_000 });
      expect(await page.$eval('#probe-state', (el) => el.textContent)).toBe('probe succeeded 100%');
      mkdirSync(OUT, { recursive: true });
      await page.screenshot({ path: path.join(OUT, 'dashboard-busy.png') });
    } finally {
      delete scenario['devices'][0].processes;
      writeScenario(scenarioPath, scenario);
    }
  }, 150_000);
});

describe.skipIf(HAVE_CHROMIUM)('dashboard in headless Chromium', () => {
  it(`skipped: ${CHROMIUM} is not installed (apt-get install chromium; .ci/run installs it)`, () => {
    expect(HAVE_CHROMIUM).toBe(false);
  });
});
