/**
 * The host's hwloc XML, from the installed `lstopo --of xml`. Run on demand,
 * kept for a while (a host's hardware does not change between two requests)
 * and never twice at once. A missing lstopo is a normal state, answered with
 * the reason (the route's 501), not an error in the log.
 *
 * hwloc's CUDA, OpenCL and Level Zero backends open a context on every GPU
 * to read its properties: on a GPU topod is probing that is the interference
 * topod guards against, so they are left out (HWLOC_COMPONENTS), unless the
 * operator chose hwloc's components. Its NVML backend reads without a context
 * and stays. An operator's HWLOC_COMPONENTS, or HWLOC_XMLFILE (hwloc then
 * reads that file instead of the hardware; a set HWLOC_COMPONENTS would
 * override it), is passed on as it is.
 */
import { execFile } from 'node:child_process';

export const LSTOPO_TIMEOUT_MS = 30_000;
export const LSTOPO_KEEP_MS = 60_000;
const MAX_XML_BYTES = 64 * 1024 * 1024;
const CONTEXT_BACKENDS_OFF = '-cuda,-opencl,-levelzero';

export type HostXml = { kind: 'xml'; xml: string } | { kind: 'missing'; reason: string } | { kind: 'failed'; reason: string };

/**
 * lstopo-no-graphics first: it is what every distribution's base hwloc package installs (Fedora and RHEL put
 * `lstopo` in hwloc-gui); Debian's hwloc has both.
 */
export const LSTOPO_COMMANDS = ['lstopo-no-graphics', 'lstopo'] as const;

function runOnce(command: string, env: Readonly<Record<string, string | undefined>>): Promise<HostXml> {
  return new Promise((resolve) => {
    execFile(
      command,
      ['--of', 'xml', '-'],
      { env, timeout: LSTOPO_TIMEOUT_MS, maxBuffer: MAX_XML_BYTES, encoding: 'utf8' },
      (error, stdout, stderr) => {
        if (error && (error as NodeJS.ErrnoException).code === 'ENOENT') {
          resolve({ kind: 'missing', reason: `${command} not found on PATH` });
        } else if (error) {
          const why = error.killed
            ? `did not finish within ${LSTOPO_TIMEOUT_MS} ms`
            : `failed: ${stderr.trim().split('\n')[0] || error.message}`;
          resolve({ kind: 'failed', reason: `${command} --of xml ${why}` });
        } else {
          resolve({ kind: 'xml', xml: stdout });
        }
      },
    );
  });
}

/** Runs the first lstopo found (`--of xml`) once; none on PATH means hwloc is not installed. */
export async function runLstopo(
  env: Readonly<Record<string, string | undefined>>,
  commands: readonly string[] = LSTOPO_COMMANDS,
): Promise<HostXml> {
  const chosen = env['HWLOC_COMPONENTS'] !== undefined || env['HWLOC_XMLFILE'] !== undefined;
  const childEnv = chosen ? env : { ...env, HWLOC_COMPONENTS: CONTEXT_BACKENDS_OFF };
  for (const command of commands) {
    const answer = await runOnce(command, childEnv);
    if (answer.kind !== 'missing') return answer;
  }
  return {
    kind: 'missing',
    reason: `lstopo is not installed (neither ${commands.join(' nor ')} is on PATH): install hwloc (Debian and Ubuntu: apt-get install hwloc) to get the node as hwloc XML`,
  };
}

/** The host XML, read at most once per LSTOPO_KEEP_MS; concurrent askers share one run. A missing lstopo is looked for again each time. */
export class HostHwlocXml {
  private latest: { value: HostXml; readAtMs: number } | null = null;
  private running: Promise<HostXml> | null = null;

  constructor(
    private readonly read: () => Promise<HostXml>,
    private readonly keepMs = LSTOPO_KEEP_MS,
    private readonly nowMs: () => number = Date.now,
  ) {}

  get(): Promise<HostXml> {
    if (this.latest && this.latest.value.kind === 'xml' && this.nowMs() - this.latest.readAtMs < this.keepMs)
      return Promise.resolve(this.latest.value);
    this.running ??= this.read().then((value) => {
      this.latest = { value, readAtMs: this.nowMs() };
      this.running = null;
      return value;
    });
    return this.running;
  }
}
