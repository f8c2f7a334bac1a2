/** Pure checks behind the admin guard (server/plugins/admin-auth.ts). */
import { createHash, timingSafeEqual } from 'node:crypto';

/** 127.0.0.0/8, ::1 and IPv4-mapped loopback (::ffff:127.x.y.z). */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.toLowerCase().startsWith('::ffff:') ? address.slice(7) : address;
  if (/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4)) return true;
  return address === '::1' || address === '0:0:0:0:0:0:0:1';
}

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(header: string | undefined): string | null {
  if (header === undefined) return null;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return match?.[1] ?? null;
}

/**
 * Constant-time equality of a presented token and the configured one. Both
 * are hashed first so the comparison does not leak the configured length.
 */
export function tokensEqual(presented: string, expectedDigest: Buffer): boolean {
  return timingSafeEqual(tokenDigest(presented), expectedDigest);
}

export function tokenDigest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}
