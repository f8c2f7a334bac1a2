/**
 * Conditional-request helpers (RFC 9110 §13.1.2, §8.8.3). Pure functions:
 * the topology route calls them on every poll, so they stay allocation-light.
 */

/** Quotes a bare tag; leaves `"…"` and `W/"…"` as they are. */
export function formatEtag(tag: string): string {
  return tag.startsWith('"') || tag.startsWith('W/"') ? tag : `"${tag}"`;
}

function opaqueTag(tag: string): string {
  return tag.startsWith('W/') ? tag.slice(2) : tag;
}

const ENTITY_TAG = /(?:W\/)?"[^"]*"|\*/g;

/**
 * Whether If-None-Match names the current representation: `*`, or any listed
 * tag equal under the weak comparison (If-None-Match always compares weakly).
 */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (header === undefined || header === '') return false;
  if (header === etag) return true;
  const current = opaqueTag(etag);
  for (const match of header.matchAll(ENTITY_TAG)) {
    const tag = match[0];
    if (tag === '*' || opaqueTag(tag) === current) return true;
  }
  return false;
}
