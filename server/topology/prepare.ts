import { createHash } from 'node:crypto';
import type { PreparedDocument } from './../model/topology-api.js';

/** Serialises once and derives a strong ETag from the bytes, so equal documents share a tag. */
export function prepareDocument<T>(document: T): PreparedDocument<T> {
  const body = JSON.stringify(document);
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  return { value: document, body, etag };
}
