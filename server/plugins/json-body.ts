/**
 * The application/json body parser. fastify's own refuses a `__proto__` key
 * (or `constructor.prototype`) as it should, but answers "not valid JSON"
 * for it, so a client cannot tell a typo from a refused key (issue 22).
 * Here the JSON is parsed by JSON.parse (which never sets a prototype: the
 * key becomes an own property), then any such key is refused by name before
 * a handler or a spread could act on it.
 */
import fp from 'fastify-plugin';
import { MalformedBodyError } from '../errors.js';

/** The first key of `value`, at any depth, that could change a prototype once copied; null when none. */
export function prototypeKey(value: unknown): string | null {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const node = pending.pop();
    if (node === null || typeof node !== 'object') continue;
    for (const [key, child] of Object.entries(node)) {
      if (key === '__proto__') return '__proto__';
      if (key === 'constructor' && child !== null && typeof child === 'object' && Object.hasOwn(child, 'prototype'))
        return 'constructor.prototype';
      pending.push(child);
    }
  }
  return null;
}

export default fp(
  async (app) => {
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
      const text = String(body);
      if (text.trim() === '') {
        done(
          new MalformedBodyError(
            'The request body is empty though its Content-Type is application/json: send a JSON object, or no body and no Content-Type.',
          ),
          undefined,
        );
        return;
      }
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        done(new MalformedBodyError('The request body is not valid JSON.'), undefined);
        return;
      }
      const refused = prototypeKey(value);
      if (refused !== null) {
        done(
          new MalformedBodyError(
            `The request body has a "${refused}" key, which could change object prototypes; topod refuses such bodies.`,
          ),
          undefined,
        );
        return;
      }
      done(null, value);
    });
  },
  { name: 'topod-json-body' },
);
