/** The program itself, without a daemon: --version, `serve --help` from the daemon's settings table, the flags `serve` hands on. */
import { readFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { daemonArgs, defaultText, serveCommand } from '../../../server/cli/commands/serve.js';
import type { CliContext } from '../../../server/cli/context.js';
import { SETTINGS } from '../../../server/config.js';
import { runCliCaptured as cli } from '../../helpers/cli-run.js';

const VERSION = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

describe('topod, without a daemon', () => {
  it.each([['--version'], ['-V']])('%s prints the package’s version', async (flag) => {
    const run = await cli([flag]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`${VERSION}\n`);
  });

  it('serve --help lists every daemon setting with its variable and default, from config’s table', async () => {
    for (const args of [
      ['serve', '--help'],
      ['help', 'serve'],
    ]) {
      const run = await cli(args);
      expect(run.code).toBe(0);
      const text = run.stdout.replace(/\s+/g, ' ');
      for (const setting of SETTINGS) {
        expect(text, setting.env).toContain(setting.flag);
        expect(text, setting.env).toContain(`[${setting.env}; default: ${defaultText(setting.fallback)}]`);
      }
    }
    expect(defaultText(null)).toBe('unset');
    expect(defaultText(['a', 'b'])).toBe('a,b');
  });

  it('serve hands the daemon exactly the flags given, switches without a value', () => {
    const root = new Command('topod').exitOverride();
    const context: CliContext = {
      io: { stdout: new PassThrough(), stderr: new PassThrough(), env: {} },
      client: () => undefined as never,
      exit: () => undefined,
    };
    let handed: string[] = [];
    const serve = serveCommand(context).exitOverride();
    serve.action((_options: unknown, self: Command) => {
      handed = daemonArgs(self);
    });
    root.addCommand(serve);
    root.parse(['serve', '--port', '0', '--insecure', '--sim-model=a100-sxm4-40gb,h100-sxm5-80gb', '--backend', 'sim'], { from: 'user' });
    expect(handed).toEqual(['--port', '0', '--backend', 'sim', '--sim-model', 'a100-sxm4-40gb,h100-sxm5-80gb', '--insecure']);
  });

  it('an unknown command or format is refused with the choices', async () => {
    const format = await cli(['gpus', '-o', 'xml']);
    expect(format.code).not.toBe(0);
    expect(format.stderr).toMatch(/xml.*table, wide, json, yaml/s);
  });
});
