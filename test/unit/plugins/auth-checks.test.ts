import { describe, expect, it } from 'vitest';
import { bearerToken, isLoopbackAddress, tokenDigest, tokensEqual } from '../../../server/plugins/auth-checks.js';

describe('isLoopbackAddress', () => {
  it.each(['127.0.0.1', '127.255.0.9', '::1', '::ffff:127.0.0.1', '::FFFF:127.1.2.3'])('accepts %s', (address) => {
    expect(isLoopbackAddress(address)).toBe(true);
  });

  it.each([undefined, '', '10.0.0.1', '128.0.0.1', '::ffff:10.0.0.1', '::2', 'fe80::1', '127.0.0.1.evil', '1127.0.0.1'])(
    'rejects %s',
    (address) => {
      expect(isLoopbackAddress(address)).toBe(false);
    },
  );
});

describe('bearerToken', () => {
  it.each([
    ['Bearer abc.def', 'abc.def'],
    ['bearer abc', 'abc'],
    ['Bearer   abc  ', 'abc'],
  ])('reads %j', (header, token) => {
    expect(bearerToken(header)).toBe(token);
  });

  it.each([undefined, '', 'Bearer', 'Bearer ', 'Basic abc', 'Bearer a b', 'Bearerabc'])('refuses %j', (header) => {
    expect(bearerToken(header)).toBeNull();
  });
});

describe('tokensEqual', () => {
  const expected = tokenDigest('correct horse battery');
  it('accepts the same token', () => expect(tokensEqual('correct horse battery', expected)).toBe(true));
  it('refuses a different one of another length', () => expect(tokensEqual('correct', expected)).toBe(false));
  it('refuses a different one of the same length', () => expect(tokensEqual('correct horse batterz', expected)).toBe(false));
});
