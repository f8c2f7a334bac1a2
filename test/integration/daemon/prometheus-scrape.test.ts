/**
 * A real Prometheus (Debian's `prometheus` package) scrapes a real daemon —
 * fake NVML with a mixed MIG layout, the simulated GPU measuring — and
 * answers a PromQL query for one MIG instance's L2 share with exactly what
 * the daemon's topology document says.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { profileLabel } from '../../../server/faces/metrics.js';
import type { DaemonProcess } from '../../helpers/daemon-process.js';
import { startFakeNvmlDaemon } from '../../helpers/fake-nvml-daemon.js';
import { eventually, getJson } from '../../helpers/http.js';
import { DAEMON_PROBE_WAIT_MS } from '../../helpers/probed-database.js';
import { useTempDir } from '../../helpers/temp-dir.js';
import { assertNativeBuilt } from '../nvml/fake-nvml.js';

const PROMETHEUS = spawnSync('prometheus', ['--version']).status === 0;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

const running: Array<{ stop: () => Promise<unknown> }> = [];
afterEach(async () => {
  for (const process of running.splice(0)) await process.stop();
});

describe('Prometheus scrapes topod', () => {
  const tempDir = useTempDir();

  it.skipIf(PROMETHEUS)('skipped — Prometheus is not installed (apt-get install prometheus; .ci/run installs it)', () => {
    expect(PROMETHEUS).toBe(false);
  });

  it.skipIf(!PROMETHEUS)(
    'answers a PromQL query for the L2 share of a MIG instance with the document’s value',
    async () => {
      assertNativeBuilt();
      const dir = tempDir();
      const scenario = path.join(dir, 'scenario.json');
      copyFileSync('test/fixtures/nvml/h100-80gb-mig-mixed.json', scenario);
      const daemon: DaemonProcess = await startFakeNvmlDaemon(dir, scenario, 500);
      running.push({ stop: () => daemon.stop('SIGKILL') });

      const { body: list } = await getJson(`${daemon.baseUrl}/v1/gpus`);
      const gpu = list.gpus[0];
      const { body: document } = await eventually(
        () => getJson(`${daemon.baseUrl}/v1/gpus/0/topology`),
        (r) => r.status === 200,
        DAEMON_PROBE_WAIT_MS,
        250,
      );
      const instance = document.mig.instances.find((i: { l2: { bytes: number | null } }) => i.l2.bytes !== null);
      expect(instance).toBeDefined();

      const port = await freePort();
      const target = new URL(daemon.baseUrl).host;
      writeFileSync(
        path.join(dir, 'prometheus.yml'),
        `global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: topod\n    static_configs:\n      - targets: ['${target}']\n`,
      );
      const prometheus: ChildProcess = spawn(
        'prometheus',
        [
          `--config.file=${path.join(dir, 'prometheus.yml')}`,
          `--storage.tsdb.path=${path.join(dir, 'tsdb')}`,
          `--web.listen-address=127.0.0.1:${port}`,
        ],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
      const stderr: string[] = [];
      prometheus.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
      const exited = new Promise((resolve) => prometheus.once('exit', resolve));
      running.push({ stop: async () => (prometheus.kill('SIGKILL'), exited) });

      const selector = `topod_mig_l2_share_bytes{UUID="${gpu.uuid}",GPU_I_ID="${instance.gpuInstanceId}",GPU_I_PROFILE="${profileLabel(instance.profileName)}"}`;
      const query = async () => {
        try {
          const response = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(selector)}`);
          return (await response.json()) as {
            status: string;
            data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
          };
        } catch {
          return null;
        }
      };
      const answer = await eventually(query, (r) => (r?.data.result.length ?? 0) > 0, 60_000, 500).catch((error: unknown) => {
        throw new Error(`${String(error)}; prometheus stderr: ${stderr.join('').slice(-2000)}`);
      });
      expect(answer!.status).toBe('success');
      expect(answer!.data.result).toHaveLength(1);
      const [series] = answer!.data.result;
      expect(Number(series!.value[1])).toBe(instance.l2.bytes);
      expect(series!.metric).toMatchObject({ job: 'topod', modelName: gpu.name, gpu: String(gpu.index) });

      // The scrape itself was healthy.
      const up = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent('up{job="topod"}')}`).then(
        (r) => r.json() as Promise<any>,
      );
      expect(up.data.result[0].value[1]).toBe('1');
    },
    DAEMON_PROBE_WAIT_MS + 120_000,
  );
});
