import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DAEMON_NODE_FLAGS } from '../../server/node-flags.js';

describe('the daemon runs with the same V8 flags everywhere', () => {
  it.each(DAEMON_NODE_FLAGS)('npm start and the Dockerfile pass %s', (flag) => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.start).toContain(` ${flag} `);
    expect(readFileSync('Dockerfile', 'utf8')).toMatch(new RegExp(`CMD \\[.*"${flag}"`));
  });
});
