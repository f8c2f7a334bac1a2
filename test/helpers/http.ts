/** HTTP helpers for tests that talk to a real daemon process over a socket. */

export async function getJson(url: string): Promise<{ status: number; body: Record<string, any> }> {
  const response = await fetch(url);
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

/** Reads until `accept` holds, or fails after `timeoutMs` showing the last value read. */
export async function eventually<T>(read: () => Promise<T>, accept: (value: T) => boolean, timeoutMs: number, pollMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms: ${JSON.stringify(value).slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
