/**
 * `topod completion bash|zsh`: the scripts list every command of the CLI and
 * complete options and their values; bash's is run by bash, zsh's by zsh
 * (driven through a pseudo-terminal, where zsh is installed).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { Command } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../../server/cli/main.js';
import { completionScript, completionSpec } from '../../../server/cli/completion.js';
import { OUTPUT_FORMATS } from '../../../server/cli/output.js';
import { JOB_STATES } from '../../../server/model/job.js';

const ZSH = spawnSync('zsh', ['--version']).status === 0;
const dir = mkdtempSync(path.join(tmpdir(), 'topod-completion-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function program(): Command {
  return buildProgram({ stdout: new PassThrough(), stderr: new PassThrough(), env: {} }, () => undefined);
}

/** What the CLI's program lists as its commands (the implicit `help` included). */
const commandNames = (root: Command) =>
  root
    .createHelp()
    .visibleCommands(root)
    .map((c) => c.name());

function scriptFile(shell: 'bash' | 'zsh', root = program()): string {
  const file = path.join(dir, `${shell}-${Math.random().toString(36).slice(2)}`);
  writeFileSync(file, completionScript(root, shell));
  return file;
}

/** Bash's completion of `line` (the last word is the one completed): what COMPREPLY holds. */
function bashComplete(script: string, line: string): string[] {
  const words = line.split(' ');
  const body = [
    `source ${JSON.stringify(script)}`,
    `COMP_WORDS=(${words.map((w) => JSON.stringify(w)).join(' ')})`,
    `COMP_CWORD=${words.length - 1}`,
    '_topod_completion',
    'printf "%s\\n" "${COMPREPLY[@]}"',
  ].join('\n');
  const run = spawnSync('bash', ['--norc', '--noprofile', '-c', body], { encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  return run.stdout.split('\n').filter(Boolean).sort();
}

/**
 * zsh's completion of `line`: an interactive zsh on a pseudo-terminal (zsh/zpty)
 * with compinit and the script loaded, `compadd` wrapped to print what it is given.
 */
function zshComplete(script: string, line: string): string[] {
  const driver = path.join(dir, 'capture.zsh');
  writeFileSync(
    driver,
    [
      'zmodload zsh/zpty',
      'zpty z zsh -f -i',
      `zpty -w z "PROMPT='>'; autoload -U compinit; compinit -u -D"`,
      'zpty -w z "source $1"',
      `zpty -w z 'compadd () { builtin compadd -O __hits "$@"; local h; for h in $__hits; do print -r -- "HIT:$h:"; done; builtin compadd "$@" }'`,
      `zpty -w z "zstyle ':completion:*' menu no; LISTMAX=0"`,
      // A key bound to completion followed by a marker: reading up to the marker waits exactly as long as completion takes.
      `zpty -w z 'capture() { zle complete-word; print -r -- "__EN""D__" }; zle -N capture; bindkey "^T" capture'`,
      `zpty -n -w z "$2"$'\\x14'`,
      `zpty -r z out '*__END__*'`,
      `print -r -- $out | tr "\\r" "\\n" | grep -ao 'HIT:[^:$]*:' | sed 's/^HIT://; s/:$//' | sort -u`,
      'zpty -d z',
    ].join('\n'),
  );
  const run = spawnSync('zsh', ['-f', driver, script, line], { encoding: 'utf8', timeout: 60_000 });
  expect(run.status, run.stderr).toBe(0);
  return run.stdout.split('\n').filter(Boolean).sort();
}

describe('completion scripts', () => {
  it('list every command the CLI has, each with its options, the hidden deprecated ones left out', () => {
    const root = program();
    const names = commandNames(root);
    expect(names).toEqual(expect.arrayContaining(['serve', 'gpus', 'topology', 'probe', 'jobs', 'export', 'fit', 'completion', 'help']));
    const spec = completionSpec(root);
    expect(spec.commands.map((c) => c.name)).toEqual(names);
    for (const shell of ['bash', 'zsh'] as const) {
      const script = completionScript(root, shell);
      for (const name of names) expect(script, `${shell}: ${name}`).toMatch(new RegExp(`\\b${name}\\b`));
    }
    const gpus = spec.commands.find((c) => c.name === 'gpus')!;
    expect(gpus.options.flatMap((o) => o.flags)).toEqual(expect.arrayContaining(['-o', '--output', '--no-headers', '--url']));
    expect(gpus.options.flatMap((o) => o.flags)).not.toContain('--json');
    expect(spec.commands.find((c) => c.name === 'topology')!.options.flatMap((o) => o.flags)).not.toContain('--format');
  });

  it('follow the program: a command added to it is completed too', () => {
    const root = program();
    root.addCommand(new Command('topple').description('a later command').option('--wobble <degrees>', 'wobble'));
    expect(bashComplete(scriptFile('bash', root), 'topod topp')).toEqual(['topple']);
    expect(bashComplete(scriptFile('bash', root), 'topod topple --wo')).toEqual(['--wobble']);
  });

  it('bash: commands, options, option values and argument choices', () => {
    const script = scriptFile('bash');
    expect(bashComplete(script, 'topod ')).toEqual([...commandNames(program())].sort());
    expect(bashComplete(script, 'topod -')).toEqual(['--help', '--url', '--version', '-V', '-h']);
    expect(bashComplete(script, 'topod gpus -o ')).toEqual([...OUTPUT_FORMATS].sort());
    expect(bashComplete(script, 'topod --url http://node:8080 jobs --state ')).toEqual([...JOB_STATES].sort());
    expect(bashComplete(script, 'topod jobs --state r')).toEqual(['running']);
    expect(bashComplete(script, 'topod completion ')).toEqual(['bash', 'zsh']);
    expect(bashComplete(script, 'topod probe 0 --w')).toEqual(['--watch']);
    expect(bashComplete(script, 'topod fit 0 --working-set ')).toEqual([]);
    expect(bashComplete(script, 'topod serve --probe-w')).toEqual(['--probe-when']);
  });

  it.skipIf(!ZSH)(
    'zsh: the same, through zsh’s own completion system',
    () => {
      const script = scriptFile('zsh');
      expect(spawnSync('zsh', ['-n', script]).status).toBe(0);
      expect(zshComplete(script, 'topod ')).toEqual([...commandNames(program())].sort());
      expect(zshComplete(script, 'topod gpus -o ')).toEqual([...OUTPUT_FORMATS].sort());
      expect(zshComplete(script, 'topod --url http://node:8080 jobs --state ')).toEqual([...JOB_STATES].sort());
      expect(zshComplete(script, 'topod completion ')).toEqual(['bash', 'zsh']);
      expect(zshComplete(script, 'topod topology 0 -')).toEqual(expect.arrayContaining(['--output', '--no-headers', '--url', '-o']));
    },
    120_000,
  );

  it.skipIf(ZSH)('zsh completion test skipped — zsh is not installed', () => {
    expect(ZSH).toBe(false);
  });
});
