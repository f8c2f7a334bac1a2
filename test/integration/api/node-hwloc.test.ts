/**
 * GET /v1/node?format=hwloc-xml through the app, with the real lstopo: this
 * machine's XML (no GPU: the GPU is added and says so), a host XML with the
 * GPU listed by hwloc's NVML backend (lstopo reads it through HWLOC_XMLFILE,
 * as an operator may point it at a curated file), a host without lstopo (501
 * with the reason) and an lstopo that fails (500, the reason in the log).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../../server/errors.js';
import { DocumentTopology, mergedGpu, recordedH100Result } from '../../helpers/face-documents.js';
import { useTempDir } from '../../helpers/temp-dir.js';
import { buildTestApp, PROBLEM_TYPE, type TestApp } from './harness.js';

const FIXTURE = path.resolve('test/fixtures/faces/hwloc-host-h100.xml');
const tempDir = useTempDir('topod-node-hwloc-');
const HAVE_LSTOPO = (() => {
  try {
    execFileSync('lstopo', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

let t: TestApp | undefined;
const savedEnv = { PATH: process.env['PATH'], HWLOC_XMLFILE: process.env['HWLOC_XMLFILE'] };
afterEach(async () => {
  await t?.app.close();
  t = undefined;
  for (const [name, value] of Object.entries(savedEnv)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

async function appWithH100(): Promise<{ app: TestApp['app']; uuid: string; l2Bytes: number }> {
  const gpu = mergedGpu(recordedH100Result(), 'h100-80gb-mig-mixed.json');
  t = await buildTestApp({ topology: new DocumentTopology([gpu]) });
  return { app: t.app, uuid: gpu.summary.uuid, l2Bytes: gpu.merged.elements.l2!.size!.value };
}

function lstopoVerbose(xml: string): string {
  const file = path.join(tempDir(), 'node.xml');
  writeFileSync(file, xml);
  return execFileSync('lstopo', ['-i', file, '-v', '--of', 'console'], { encoding: 'utf8' });
}

const lineOf = (output: string, pattern: RegExp) => output.split('\n').find((line) => pattern.test(line)) ?? '';

describe.skipIf(!HAVE_LSTOPO)('GET /v1/node?format=hwloc-xml with lstopo installed', () => {
  it('answers this host’s hwloc XML with the GPU hwloc did not list added, and lstopo -i shows its attributes', async () => {
    const { app, uuid, l2Bytes } = await appWithH100();
    const response = await app.inject({ url: '/v1/node?format=hwloc-xml' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/xml; charset=utf-8');
    const output = lstopoVerbose(response.body);
    const gpu = lineOf(output, /"topod0"$/);
    expect(gpu).toContain(`TopodGPUUUID=${uuid}`);
    expect(gpu).toContain(`TopodL2SizeBytes=${l2Bytes}`);
    expect(gpu).toContain('TopodNote="hwloc did not list this GPU');
    expect(lineOf(output, /^Machine/)).toMatch(/HostName=/);
  });

  it('puts the attributes on the GPU hwloc listed, matched by PCI bus id (HWLOC_XMLFILE: a host with an H100)', async () => {
    process.env['HWLOC_XMLFILE'] = FIXTURE;
    const { app, uuid } = await appWithH100();
    const response = await app.inject({ url: '/v1/node?format=hwloc-xml' });
    expect(response.statusCode).toBe(200);
    const output = lstopoVerbose(response.body);
    expect(lineOf(output, /"nvml0"$/)).toContain(`TopodGPUUUID=${uuid}`);
    expect(output).not.toContain('"topod0"');
  });

  it('still answers the node document as JSON by default and with format=json', async () => {
    const { app, uuid } = await appWithH100();
    for (const url of ['/v1/node', '/v1/node?format=json']) {
      const response = await app.inject({ url });
      expect(response.statusCode).toBe(200);
      expect(response.json().gpus.map((g: { uuid: string }) => g.uuid)).toEqual([uuid]);
    }
  });
});

describe.skipIf(HAVE_LSTOPO)('GET /v1/node?format=hwloc-xml with lstopo installed', () => {
  it('skipped: lstopo is not installed (apt-get install hwloc; .ci/run installs it)', () => {
    expect(HAVE_LSTOPO).toBe(false);
  });
});

describe('GET /v1/node?format=hwloc-xml without a working lstopo', () => {
  it('answers 501 problem+json with the reason where lstopo is not installed', async () => {
    process.env['PATH'] = tempDir();
    const { app } = await appWithH100();
    const response = await app.inject({ url: '/v1/node?format=hwloc-xml' });
    expect(response.statusCode).toBe(501);
    expect(response.headers['content-type']).toMatch(PROBLEM_TYPE);
    const problem = response.json();
    expect(problem.code).toBe(ERROR_CODES.HWLOC_UNAVAILABLE);
    expect(problem.detail).toMatch(/lstopo is not installed .*apt-get install hwloc/);
  });

  it('answers 500 where lstopo fails, its reason in the log only', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'lstopo-no-graphics'), '#!/bin/sh\necho "hwloc: topology discovery failed" >&2\nexit 3\n');
    chmodSync(path.join(dir, 'lstopo-no-graphics'), 0o755);
    process.env['PATH'] = `${dir}:${savedEnv.PATH ?? ''}`;
    const gpu = mergedGpu(recordedH100Result(), 'h100-80gb-mig-mixed.json');
    t = await buildTestApp({ topology: new DocumentTopology([gpu]), captureLogs: true });
    const response = await t.app.inject({ url: '/v1/node?format=hwloc-xml' });
    expect(response.statusCode).toBe(500);
    expect(response.json().code).toBe(ERROR_CODES.INTERNAL);
    expect(t.logs.some((line) => line.includes('hwloc: topology discovery failed'))).toBe(true);
  });

  it('refuses an unknown format', async () => {
    const { app } = await appWithH100();
    const response = await app.inject({ url: '/v1/node?format=lstopo' });
    expect(response.statusCode).toBe(400);
    expect(response.json().code).toBe(ERROR_CODES.VALIDATION);
  });
});
