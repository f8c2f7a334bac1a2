/**
 * The test's kustomize renderer (test/helpers/kustomize.ts) against the real
 * one, `kubectl kustomize`, where kubectl is installed: the same objects for
 * deploy/kubernetes and each overlay; a copy holding only the files git
 * keeps renders (no git-ignored token file needed); and a secretGenerator
 * of a long token folds its base64 as the helper says it does, which is why
 * such a Secret failed schema validation.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { renderKustomization, type Manifest } from '../../helpers/kustomize.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const DEPLOY = path.join(ROOT, 'deploy/kubernetes');
const KUBECTL = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;
const dir = mkdtempSync(path.join(tmpdir(), 'topod-kustomize-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `kubectl kustomize <folder>`, parsed as Kubernetes parses it (YAML 1.1). */
function kubectlKustomize(folder: string): Manifest[] {
  const run = spawnSync('kubectl', ['kustomize', folder], { encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  return parseAllDocuments(run.stdout, { version: '1.1' })
    .map((doc) => doc.toJS() as Manifest | null)
    .filter((m): m is Manifest => m !== null);
}

const byIdentity = (manifests: Manifest[]) =>
  Object.fromEntries(manifests.map((m) => [`${m.kind}/${m.metadata.namespace ?? ''}/${m.metadata.name}`, m]));

const overlays = readdirSync(path.join(DEPLOY, 'overlays')).map((name) => path.join(DEPLOY, 'overlays', name));

describe.skipIf(!KUBECTL)('the kustomize renderer against kubectl kustomize', () => {
  it.each([DEPLOY, path.join(DEPLOY, 'base'), ...overlays].map((folder) => [path.relative(ROOT, folder), folder]))(
    '%s: the same objects',
    (_name, folder) => {
      expect(byIdentity(renderKustomization(folder))).toEqual(byIdentity(kubectlKustomize(folder)));
    },
  );

  it('renders from the files git keeps alone (none it ignores, such as a token file)', () => {
    const tracked = spawnSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', 'deploy/kubernetes'], {
      cwd: ROOT,
      encoding: 'utf8',
    })
      .stdout.split('\n')
      .filter(Boolean);
    expect(tracked).toContain('deploy/kubernetes/kustomization.yaml');
    const copy = path.join(dir, 'checkout');
    for (const file of tracked) {
      mkdirSync(path.dirname(path.join(copy, file)), { recursive: true });
      cpSync(path.join(ROOT, file), path.join(copy, file));
    }
    for (const folder of ['deploy/kubernetes', ...overlays.map((o) => path.relative(ROOT, o))])
      expect(kubectlKustomize(path.join(copy, folder)).length).toBeGreaterThan(0);
  });

  it('a secretGenerator folds a long value’s base64 as the renderer says (so validation sees what kubectl sends)', () => {
    const folder = path.join(dir, 'generator');
    mkdirSync(folder, { recursive: true });
    writeFileSync(path.join(folder, 'token'), `${'0123456789abcdef'.repeat(4)}\n`);
    writeFileSync(
      path.join(folder, 'kustomization.yaml'),
      [
        'apiVersion: kustomize.config.k8s.io/v1beta1',
        'kind: Kustomization',
        'secretGenerator:',
        '  - name: t',
        '    files:',
        '      - token',
        '    literals:',
        '      - short=abc',
        'generatorOptions:',
        '  disableNameSuffixHash: true',
        '',
      ].join('\n'),
    );
    const [secret] = kubectlKustomize(folder) as Array<Manifest & { data: Record<string, string> }>;
    expect(secret?.data['token']).toContain('\n');
    expect(renderKustomization(folder)).toEqual(kubectlKustomize(folder));
  });
});

describe.skipIf(KUBECTL)('kustomize comparison', () => {
  it('skipped — kubectl is not installed', () => {
    expect(KUBECTL).toBe(false);
  });
});
