/**
 * The opaque cursor of `GET /v1/jobs`: base64url of the JSON pair
 * [createdAt, id] of the last job a page showed. Clients never build one;
 * they follow `next`. Anything that does not decode to a pair this server
 * could have issued is a 400, never a silent first page.
 */
import type { JobPosition } from '../model/job.js';

const ISO_TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

export function encodeJobCursor(position: JobPosition): string {
  return Buffer.from(JSON.stringify([position.createdAt, position.id]), 'utf8').toString('base64url');
}

/** The position a cursor names; null when it is not one this server issued. */
export function decodeJobCursor(cursor: string): JobPosition | null {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(value) || value.length !== 2) return null;
  const [createdAt, id] = value as unknown[];
  if (typeof createdAt !== 'string' || !ISO_TIMESTAMP.test(createdAt) || Number.isNaN(Date.parse(createdAt))) return null;
  if (typeof id !== 'string' || id === '' || id.length > 128) return null;
  const position = { createdAt, id };
  // One spelling per position: base64url padding or stray bits that decode alike are not this server's cursor.
  return encodeJobCursor(position) === cursor ? position : null;
}
