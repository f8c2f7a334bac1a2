/**
 * The CLI's HTTP client: the daemon's REST API and its event stream, with
 * errors a user can act on (daemon not running, problem+json answers).
 */
import type { TopodEvent } from '../model/topology-api.js';

export const DEFAULT_URL = 'http://127.0.0.1:8080';

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export interface ClientOptions {
  url: string;
  token: string | null;
}

interface ProblemBody {
  title?: string;
  detail?: string;
  code?: string;
}

export class TopodClient {
  readonly baseUrl: string;

  constructor(private readonly options: ClientOptions) {
    this.baseUrl = options.url.replace(/\/+$/, '');
  }

  private async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.options.token) headers.set('authorization', `Bearer ${this.options.token}`);
    try {
      return await fetch(`${this.baseUrl}${path}`, { ...init, headers });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const why = cause?.code ?? cause?.message ?? (error as Error).message;
      throw new CliError(
        `cannot reach the topod daemon at ${this.baseUrl} (${why}). Start it with \`topod serve\` (or \`npm start\`; \`TOPOD_BACKEND=sim\` without a GPU), or point --url / TOPOD_URL at a running one.`,
        2,
      );
    }
  }

  private async fail(response: Response, what: string): Promise<never> {
    const text = await response.text();
    let problem: ProblemBody = {};
    try {
      problem = JSON.parse(text) as ProblemBody;
    } catch {
      // not problem+json: keep the status line
    }
    const detail = problem.detail ?? (text.slice(0, 200) || response.statusText);
    const code = problem.code ? ` [${problem.code}]` : '';
    throw new CliError(`${what}: ${response.status} ${problem.title ?? response.statusText}${code}: ${detail}`);
  }

  async getJson<T>(path: string, what: string): Promise<T> {
    const response = await this.fetch(path, { headers: { accept: 'application/json' } });
    if (!response.ok) return this.fail(response, what);
    return (await response.json()) as T;
  }

  async getText(path: string, what: string, accept = '*/*'): Promise<string> {
    const response = await this.fetch(path, { headers: { accept } });
    if (!response.ok) return this.fail(response, what);
    return response.text();
  }

  async postJson<T>(path: string, body: unknown, what: string): Promise<T> {
    const response = await this.fetch(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) return this.fail(response, what);
    return (await response.json()) as T;
  }

  /**
   * Opens /v1/events; resolves once the stream is connected (so no event sent
   * after it resolves is missed). `onEvent` gets each event; `close` ends it.
   */
  async events(onEvent: (event: TopodEvent) => void): Promise<{ close: () => void; closed: Promise<void> }> {
    const abort = new AbortController();
    const response = await this.fetch('/v1/events', { headers: { accept: 'text/event-stream' }, signal: abort.signal });
    if (!response.ok || !response.body) return this.fail(response, 'event stream');
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    const pump = async (): Promise<void> => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += decoder.decode(value, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (data) onEvent(JSON.parse(data) as TopodEvent);
        }
      }
    };
    const closed = pump().catch(() => undefined);
    return { close: () => abort.abort(), closed };
  }
}
