/** `-o table|wide|json|yaml` and `--no-headers`: the default by terminal, the deprecated --json, and each rendering. */
import { PassThrough } from 'node:stream';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { chosenFormat, render, type OutputOptions } from '../../../server/cli/output.js';

function io(isTTY: boolean) {
  const stdout = Object.assign(new PassThrough(), { isTTY });
  const stderr = new PassThrough();
  let err = '';
  stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  return { io: { stdout, stderr, env: {} }, stderrText: () => err };
}

describe('the output format', () => {
  it('is a table on a terminal and JSON in a pipe, unless -o says', () => {
    expect(chosenFormat({}, io(true).io)).toBe('table');
    expect(chosenFormat({}, io(false).io)).toBe('json');
    expect(chosenFormat({ output: 'yaml' }, io(true).io)).toBe('yaml');
    expect(chosenFormat({ output: 'wide' }, io(false).io)).toBe('wide');
    // A command without tables (export) falls back to its first format.
    expect(chosenFormat({}, io(true).io, ['json', 'yaml'])).toBe('json');
  });

  it('takes the deprecated --json, says what to write instead, and refuses it beside another -o', () => {
    const run = io(true);
    expect(chosenFormat({ json: true }, run.io)).toBe('json');
    expect(run.stderrText()).toBe('topod: --json is deprecated: use -o json\n');
    expect(() => chosenFormat({ json: true, output: 'yaml' }, io(true).io)).toThrow(/--json and -o yaml ask for different outputs/);
  });

  it('renders JSON and YAML of the same value, and the table with the view asked for', () => {
    const value = { gpus: [{ index: 0, uuid: 'GPU-1', name: 'a: b', migDeviceUuids: [] as string[] }], note: 'x'.repeat(200) };
    const table = (view: { wide: boolean; headers: boolean }) => `wide=${view.wide} headers=${view.headers}`;
    expect(JSON.parse(render('json', {}, value, table))).toEqual(value);
    const yaml = render('yaml', {}, value, table);
    expect(parse(yaml)).toEqual(value);
    // No folded lines: a long string stays on one line, so line-based tools see it whole.
    expect(yaml.split('\n').some((line) => line.includes('x'.repeat(200)))).toBe(true);
    const noHeaders: OutputOptions = { headers: false };
    expect(render('table', {}, value, table)).toBe('wide=false headers=true\n');
    expect(render('wide', noHeaders, value, table)).toBe('wide=true headers=false\n');
  });
});
