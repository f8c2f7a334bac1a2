/**
 * A backend's `ok: false` answer as an exception: its stable code
 * (server/model/probe-error-code.ts, or a channel's own such as `timeout`)
 * and message. Thrown by channels when the backend answered an error or
 * died, and by the protocol's validation rules (./validate.ts).
 */
export class ProbeError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ProbeError';
  }
}
