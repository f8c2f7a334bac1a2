import { describe, expect, it } from 'vitest';
import { formatEtag, ifNoneMatchHits } from '../../../server/api/http-cache.js';

describe('ifNoneMatchHits', () => {
  const etag = '"r12-9f8e"';

  it.each([
    ['the same strong tag', '"r12-9f8e"'],
    ['the weak form of it', 'W/"r12-9f8e"'],
    ['a list holding it', '"a", "r12-9f8e"'],
    ['a list without spaces', '"a","r12-9f8e","b"'],
    ['*', '*'],
  ])('matches %s', (_label, header) => {
    expect(ifNoneMatchHits(header, etag)).toBe(true);
  });

  it.each([
    ['no header', undefined],
    ['an empty header', ''],
    ['another tag', '"r11-0000"'],
    ['an unquoted tag', 'r12-9f8e'],
    ['a prefix of it', '"r12-9f"'],
  ])('does not match %s', (_label, header) => {
    expect(ifNoneMatchHits(header, etag)).toBe(false);
  });

  it('compares weakly when the current tag is weak', () => {
    expect(ifNoneMatchHits('"x"', 'W/"x"')).toBe(true);
  });

  it('keeps commas inside a quoted tag', () => {
    expect(ifNoneMatchHits('"a,b"', '"a,b"')).toBe(true);
    expect(ifNoneMatchHits('"a,b"', '"a"')).toBe(false);
  });
});

describe('formatEtag', () => {
  it.each([
    ['abc', '"abc"'],
    ['"abc"', '"abc"'],
    ['W/"abc"', 'W/"abc"'],
  ])('%s → %s', (input, expected) => {
    expect(formatEtag(input)).toBe(expected);
  });
});
