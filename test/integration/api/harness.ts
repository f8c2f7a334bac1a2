/** Builds the app around a FakeTopology, optionally capturing its JSON log lines. */
import type { FastifyInstance } from 'fastify';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { buildApp } from '../../../server/app.js';
import { hwlocEnvironment } from '../../../server/config.js';
import { FakeTopology } from './fake-topology.js';

export const TEST_TOKEN = 'test-admin-token-0123456789';

export interface TestAppOptions {
  adminToken?: string | null;
  bodyLimitBytes?: number;
  captureLogs?: boolean;
  sseHeartbeatMs?: number;
  topology?: FakeTopology;
}

export interface TestApp {
  app: FastifyInstance;
  topology: FakeTopology;
  /** Raw JSON log lines, when captureLogs was set. */
  logs: string[];
}

export async function buildTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const topology = options.topology ?? new FakeTopology();
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(
        ...chunk
          .toString('utf8')
          .split('\n')
          .filter((line) => line !== ''),
      );
      done();
    },
  });
  const app = await buildApp({
    // lstopo's environment as config would read it now (the hwloc tests set PATH and HWLOC_XMLFILE first).
    config: {
      adminToken: options.adminToken ?? null,
      bodyLimitBytes: options.bodyLimitBytes ?? 16 * 1024,
      hwlocEnv: hwlocEnvironment(process.env),
    },
    topology,
    logger: options.captureLogs ? pino({ level: 'trace' }, sink) : false,
    version: '0.0.0-test',
    ...(options.sseHeartbeatMs === undefined ? {} : { sseHeartbeatMs: options.sseHeartbeatMs }),
  });
  await app.ready();
  return { app, topology, logs };
}

/** The problem+json content type every error must carry. */
export const PROBLEM_TYPE = /^application\/problem\+json/;
