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

/** A Host header naming this machine's loopback: localhost, 127.x.y.z or [::1], any port. */
export function isLoopbackHost(host: string | undefined): boolean {
  if (host === undefined || host === '') return false;
  const name = host.toLowerCase().replace(/:\d{1,5}$/, '');
  return name === 'localhost' || name === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}

/** An Origin a page served from this machine's loopback sends; `null` (opaque) and anything else is foreign. */
export function isLoopbackOrigin(origin: string): boolean {
  const match = /^https?:\/\/([^/]+)$/i.exec(origin.trim());
  return match !== null && isLoopbackHost(match[1]);
}

/**
 * Why a tokenless mutating request from a loopback address is still refused,
 * or null. A browser on this host can be made to send one: a page from
 * elsewhere (its Origin is foreign) or DNS rebinding (its Host is the
 * attacker's name resolving to 127.0.0.1). Tools (curl, the CLI) send no
 * Origin and a loopback Host.
 */
export function browserRefusal(headers: { origin?: string | undefined; host?: string | undefined }): string | null {
  if (headers.origin !== undefined && !isLoopbackOrigin(headers.origin))
    return `its Origin (${headers.origin.slice(0, 100)}) is not this host's loopback`;
  if (headers.host !== undefined && !isLoopbackHost(headers.host))
    return `its Host (${headers.host.slice(0, 100)}) is not a loopback name (DNS rebinding?)`;
  return null;
}
