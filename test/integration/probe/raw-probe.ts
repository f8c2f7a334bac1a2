import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { ProbeError } from '../../../server/protocol/probe-error.js';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
/** The built probe (scripts/build-probe.mjs), or TOPOD_PROBE_PATH. */
export const PROBE_PATH = process.env.TOPOD_PROBE_PATH ?? path.join(REPO_ROOT, 'native/probe/build/topod-probe');
export const probeBuilt = existsSync(PROBE_PATH);

export interface RawExchange {
  responses: Array<Record<string, unknown>>;
  exitCode: number | null;
  stderr: string;
}

/** Writes raw lines (malformed ones included) to a fresh probe and collects every stdout response until it exits. */
export function exchange(
  lines: string[],
  env: NodeJS.ProcessEnv = process.env,
  probePath = PROBE_PATH,
  args: string[] = [],
): Promise<RawExchange> {
  return new Promise((resolve, reject) => {
    const child = spawn(probePath, args, { env, cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (exitCode) => {
      const responses = stdout
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      resolve({ responses, exitCode, stderr });
    });
    child.stdin.end(lines.map((l) => `${l}\n`).join(''));
  });
}

/** Median; the mean of the two middle values for an even count. */
export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Awaits a promise that must reject with a ProbeError of this code; returns the error. */
export async function expectProbeError(promise: Promise<unknown>, code: string): Promise<ProbeError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProbeError);
  expect((error as ProbeError).code).toBe(code);
  return error as ProbeError;
}
