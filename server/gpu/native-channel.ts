import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { ProbeChannel, RequestOptions } from './backend.js';
import { ProbeError } from '../protocol/probe-error.js';
import type { ProbeOp, ProbeOps } from '../protocol/ops.js';
import { SerialQueue } from './serial-queue.js';

/** The subset of a pino logger the channel uses. */
export interface LoggerLike {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const DEFAULT_REQUEST_TIMEOUT_MS = 120_000;
const KILL_GRACE_MS = 2_000;
const STDERR_TAIL_CHARS = 2_000;

export interface JsonLinesChannelOptions {
  command: string;
  args?: string[];
  /** The process's whole environment; undefined inherits the daemon's (NativeBackend always passes one). */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  logger?: LoggerLike;
  /** Per-request limit unless the request names its own; the process is killed and restarted past it. */
  requestTimeoutMs?: number;
  /** Shown in logs and error messages, e.g. the GPU UUID. */
  label?: string;
  /** Called once when close() is called. */
  onClose?: () => void;
}

interface InFlight {
  id: number;
  op: string;
  resolve: (value: unknown) => void;
  reject: (error: ProbeError) => void;
}

/**
 * A ProbeChannel over any child process that speaks the JSON-lines probe
 * protocol (server/protocol/ops.ts). One request in flight at a time, later
 * ones queue (the probe measures one thing at a time). A request that times
 * out or is aborted kills the process; a process that dies fails its
 * in-flight request with a ProbeError; either way the next request starts a
 * fresh process. Lines on stdout that are not responses are logged and ignored.
 */
export class JsonLinesChannel implements ProbeChannel {
  private child: ChildProcessWithoutNullStreams | null = null;
  private inFlight: InFlight | null = null;
  private readonly queue = new SerialQueue();
  private nextId = 1;
  private closed = false;
  private stderrTail = '';
  private starts = 0;

  constructor(private readonly options: JsonLinesChannelOptions) {}

  /** How many processes this channel has started (restarts included). */
  get startCount(): number {
    return this.starts;
  }

  /** The running process's pid, if one runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts the process now (otherwise the first request does); rejects when it cannot be spawned. */
  async start(): Promise<void> {
    if (this.closed) throw new ProbeError('closed', `${this.label()}: the channel is closed`);
    if (this.child) return;
    const child = spawn(this.options.command, this.options.args ?? [], {
      env: this.options.env,
      cwd: this.options.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (error) =>
        reject(new ProbeError('spawn_failed', `${this.label()}: cannot start ${this.options.command}: ${error.message}`)),
      );
    });
    this.starts += 1;
    this.child = child;
    this.stderrTail = '';
    child.stdin.on('error', () => undefined); // EPIPE after a crash: reported through 'exit'
    createInterface({ input: child.stdout }).on('line', (line) => this.onLine(line));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL_CHARS);
      for (const line of chunk.split('\n')) if (line.trim()) this.options.logger?.debug({ probe: this.label(), line }, 'probe stderr');
    });
    child.once('exit', (code, signal) => this.onExit(child, code, signal));
  }

  request<O extends ProbeOp>(op: O, args: ProbeOps[O]['args'], options: RequestOptions = {}): Promise<ProbeOps[O]['result']> {
    return this.queue.run(() => this.send(op, args, options) as Promise<ProbeOps[O]['result']>);
  }

  /** Stops the process (SIGTERM, then SIGKILL) and fails anything still waiting. */
  async close(): Promise<void> {
    if (!this.closed) this.options.onClose?.();
    this.closed = true;
    this.failInFlight(new ProbeError('closed', `${this.label()}: the channel was closed`));
    await this.stop();
  }

  private async send(op: string, args: unknown, options: RequestOptions): Promise<unknown> {
    if (this.closed) throw new ProbeError('closed', `${this.label()}: the channel is closed`);
    if (options.signal?.aborted) throw new ProbeError('cancelled', `${op} was cancelled`);
    await this.start();
    const child = this.child;
    if (!child) throw new ProbeError('crashed', `${this.label()}: the probe exited before ${op} was sent`);
    const id = this.nextId++;
    const timeoutMs = options.timeoutMs ?? this.options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;

    return new Promise<unknown>((resolve, reject) => {
      const cleanup = () => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        if (this.inFlight?.id === id) this.inFlight = null;
      };
      // A measurement cannot be interrupted on the GPU: kill the process, the next request restarts it.
      const abandon = (error: ProbeError) => {
        cleanup();
        reject(error);
        this.options.logger?.warn({ probe: this.label(), op, id, code: error.code }, 'killing the probe');
        void this.stop();
      };
      const timer = setTimeout(() => abandon(new ProbeError('timeout', `${op} did not answer within ${timeoutMs} ms`)), timeoutMs);
      const onAbort = () => abandon(new ProbeError('cancelled', `${op} was cancelled`));
      options.signal?.addEventListener('abort', onAbort, { once: true });
      this.inFlight = {
        id,
        op,
        resolve: (value) => {
          cleanup();
          resolve(value);
        },
        reject: (error) => {
          cleanup();
          reject(error);
        },
      };
      if (child.exitCode !== null || child.signalCode !== null) {
        this.failInFlight(new ProbeError('crashed', `${this.label()}: the probe exited before ${op} was sent`));
        return;
      }
      child.stdin.write(`${JSON.stringify({ id, op, args })}\n`);
    });
  }

  private onLine(line: string): void {
    const response = parseResponse(line);
    if (!response) {
      if (line.trim())
        this.options.logger?.warn({ probe: this.label(), line: line.slice(0, 200) }, 'ignoring a probe stdout line that is not a response');
      return;
    }
    const current = this.inFlight;
    // id null: the probe could not read our request's id; with one request in flight it is that one.
    if (!current || (response.id !== null && response.id !== current.id)) {
      this.options.logger?.warn({ probe: this.label(), id: response.id }, 'ignoring a response to no pending request');
      return;
    }
    if (response.ok) current.resolve(response.result);
    else current.reject(new ProbeError(response.error.code, response.error.message));
  }

  private onExit(child: ChildProcessWithoutNullStreams, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.child === child) this.child = null;
    const how = signal ? `signal ${signal}` : `code ${code}`;
    const tail = this.stderrTail.trim().split('\n').slice(-3).join(' | ');
    if (this.inFlight) {
      this.failInFlight(
        new ProbeError('crashed', `${this.label()}: the probe exited (${how}) during ${this.inFlight.op}${tail ? `: ${tail}` : ''}`),
      );
    }
    if (!this.closed) this.options.logger?.info({ probe: this.label(), code, signal }, 'probe process exited');
  }

  private failInFlight(error: ProbeError): void {
    this.inFlight?.reject(error);
    this.inFlight = null;
  }

  private async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = null;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.stdin.end();
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS);
    await exited;
    clearTimeout(timer);
  }

  private label(): string {
    return this.options.label ?? this.options.command;
  }
}

type ParsedResponse =
  | { id: number | null; ok: true; result: unknown }
  | { id: number | null; ok: false; error: { code: string; message: string } };

/** A protocol response, or null for anything else (garbage, logs printed to stdout by mistake). */
export function parseResponse(line: string): ParsedResponse | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return null;
  const v = value as Record<string, unknown>;
  const id = v.id;
  if (id !== null && typeof id !== 'number') return null;
  if (v.ok === true && 'result' in v) return { id, ok: true, result: v.result };
  const error = v.error as Record<string, unknown> | undefined;
  if (v.ok === false && error && typeof error.code === 'string' && typeof error.message === 'string') {
    return { id, ok: false, error: { code: error.code, message: error.message } };
  }
  return null;
}
