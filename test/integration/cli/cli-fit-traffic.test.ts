/**
 * `topod fit` with an access (--stride, --element, --pattern, --target): the
 * query it sends and the traffic lines it prints, against the real route
 * (app.inject behind the client: no port) serving the recorded H100 with the
 * traffic its sweep measured.
 */
import { readFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError, TopodClient } from '../../../server/cli/client.js';
import { fitCommand } from '../../../server/cli/commands/fit.js';
import type { CliContext } from '../../../server/cli/context.js';
import { buildTraffic } from '../../../server/discovery/strategies/traffic.js';
import type { RawSeries } from '../../../server/model/document.js';
import { DocumentTopology, mergedGpu, recordedH100Result } from '../../helpers/face-documents.js';
import { buildTestApp, type TestApp } from '../api/harness.js';

/** The client's GET through app.inject; a 4xx/5xx becomes the CliError the real client throws. */
class InjectClient extends TopodClient {
  readonly paths: string[] = [];
  constructor(private readonly t: TestApp) {
    super({ url: 'http://topod.invalid', token: null });
  }
  override async getJson<T>(path: string, what: string): Promise<T> {
    this.paths.push(path);
    const response = await this.t.app.inject({ method: 'GET', url: path });
    if (response.statusCode >= 400)
      throw new CliError(`${what}: ${response.statusCode}: ${(response.json() as { detail: string }).detail}`);
    return response.json() as T;
  }
}

describe('topod fit with an access', () => {
  let t: TestApp;
  let client: InjectClient;

  beforeAll(async () => {
    const sweep = JSON.parse(
      gunzipSync(readFileSync(new URL('../../fixtures/h100/traffic-sweep.json.gz', import.meta.url))).toString('utf8'),
    ) as { raw: RawSeries[] };
    const measured = mergedGpu({ ...recordedH100Result(), traffic: buildTraffic(sweep.raw).traffic! }, null);
    t = await buildTestApp({ topology: new DocumentTopology([measured]) });
    client = new InjectClient(t);
  });
  afterAll(async () => t?.app.close());

  async function runFit(args: string[]): Promise<string> {
    const stdout = new PassThrough();
    const out: string[] = [];
    stdout.on('data', (chunk: Buffer) => out.push(chunk.toString()));
    const cli: CliContext = { io: { stdout, stderr: new PassThrough(), env: {} }, client: () => client, exit: () => undefined };
    await fitCommand(cli).parseAsync(args, { from: 'user' });
    return out.join('');
  }

  it('sends only the access fields given, and prints the traffic sentence and the numbers it used', async () => {
    const text = await runFit(['0', '--working-set', '1GiB', '--stride', '128', '--pattern', 'rmw', '-o', 'table']);
    expect(client.paths.at(-1)).toBe('/v1/gpus/0/fit?workingSetBytes=1073741824&strideBytes=128&pattern=rmw');
    expect(text).toMatch(/traffic: A read-modify-write of 4 B every 128 B moves [\d.]+ device-memory bytes per useful byte \(counters\)/);
    expect(text).toMatch(/used \(counters\): read transaction 32 B, read fill [\d.]+ B/);
  });

  it('without access flags: the old query and no traffic line; as JSON, the traffic object', async () => {
    const plain = await runFit(['0', '--working-set', '24MiB', '-o', 'table']);
    expect(client.paths.at(-1)).toBe('/v1/gpus/0/fit?workingSetBytes=25165824');
    expect(plain).not.toContain('traffic:');
    const json = JSON.parse(await runFit(['0', '--working-set', '1MiB', '--element', '8', '--target', 'fresh', '-o', 'json'])) as {
      traffic: { access: unknown };
    };
    expect(json.traffic.access).toEqual({ pattern: 'read', target: 'fresh', strideBytes: 8, elementBytes: 8, footprintBytes: 1048576 });
  });

  it('refuses a stride it cannot read, naming the flag, and passes the route’s 400 on', async () => {
    await expect(runFit(['0', '--working-set', '1GiB', '--stride', 'wide'])).rejects.toThrow(/--stride: "wide" is not a size/);
    await expect(runFit(['0', '--working-set', '1GiB', '--stride', '2'])).rejects.toThrow(/strideBytes must be at least elementBytes/);
  });
});
