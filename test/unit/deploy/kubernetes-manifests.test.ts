/**
 * deploy/kubernetes and its overlays as `kubectl apply -k` would send them,
 * each object validated against the Kubernetes OpenAPI schemas
 * (kubernetes-models; the prometheus-operator CRD schema for the
 * ServiceMonitor), and the pieces checked against each other, against
 * topod's own settings, the package's version and the commands in docs/operating.md.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { DaemonSet } from 'kubernetes-models/apps/v1';
import { Namespace, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import { SETTINGS } from '../../../server/config.js';
import { parse } from 'yaml';
import { kustomizeBase64, podContainers, renderKustomization, type Manifest } from '../../helpers/kustomize.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const DEPLOY = path.join(ROOT, 'deploy/kubernetes');
const OVERLAY = path.join(DEPLOY, 'overlays/nvidia-runtime-class');
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const OPERATING_DOC = readFileSync(path.join(ROOT, 'docs/operating.md'), 'utf8');

type Validating = { validate(): void };
const MODELS: Record<string, (m: Manifest) => Validating> = {
  'v1/Namespace': (m) => new Namespace(m as never),
  'v1/ServiceAccount': (m) => new ServiceAccount(m as never),
  'v1/Service': (m) => new Service(m as never),
  'v1/Secret': (m) => new Secret(m as never),
  'apps/v1/DaemonSet': (m) => new DaemonSet(m as never),
  'monitoring.coreos.com/v1/ServiceMonitor': (m) => new ServiceMonitor(m as never),
};

function validate(manifest: Manifest): void {
  const model = MODELS[`${manifest.apiVersion}/${manifest.kind}`];
  if (!model) throw new Error(`no schema for ${manifest.apiVersion} ${manifest.kind}: add it to MODELS`);
  model(manifest).validate();
}

// No file besides the checkout's: the admin token's Secret is created with kubectl, not rendered from a git-ignored file.
const rendered = (dir = DEPLOY) => renderKustomization(dir);
const find = (manifests: Manifest[], kind: string): Manifest & Record<string, any> => {
  const found = manifests.filter((m) => m.kind === kind);
  expect(found, kind).toHaveLength(1);
  return found[0] as Manifest & Record<string, any>;
};

describe('deploy/kubernetes (kustomize base and overlays)', () => {
  it.each([
    ['deploy/kubernetes', DEPLOY],
    ['overlays/nvidia-runtime-class', OVERLAY],
  ])('%s renders every object from the checkout alone, and each one validates against its Kubernetes schema', (_name, dir) => {
    const manifests = rendered(dir);
    expect(manifests.map((m) => m.kind).sort()).toEqual(['DaemonSet', 'Namespace', 'Service', 'ServiceAccount', 'ServiceMonitor']);
    for (const manifest of manifests) expect(() => validate(manifest), `${manifest.kind} ${manifest.metadata.name}`).not.toThrow();
    for (const manifest of manifests) {
      expect(manifest.metadata.labels?.['app.kubernetes.io/part-of']).toBe('topod');
      if (manifest.kind !== 'Namespace') expect(manifest.metadata.namespace).toBe('topod');
    }
  });

  it('the runtime class is an overlay’s choice: none in the base, nvidia in overlays/nvidia-runtime-class, nothing else changed', () => {
    const base = find(rendered(), 'DaemonSet');
    const overlay = find(rendered(OVERLAY), 'DaemonSet');
    expect(base.spec.template.spec.runtimeClassName).toBeUndefined();
    expect(overlay.spec.template.spec.runtimeClassName).toBe('nvidia');
    const { runtimeClassName: _runtimeClassName, ...rest } = overlay.spec.template.spec;
    expect(rest).toEqual(base.spec.template.spec);
  });

  it('runs at the node-critical priority, from an image pinned to the package’s version', () => {
    const ds = find(rendered(), 'DaemonSet');
    expect(ds.spec.template.spec.priorityClassName).toBe('system-node-critical');
    const kustomization = parse(readFileSync(path.join(DEPLOY, 'base/kustomization.yaml'), 'utf8')) as {
      images: Array<{ name: string; newTag: unknown }>;
    };
    // Quoted in the file: a version such as 1.10 must stay a string, not become the number 1.1.
    expect(kustomization.images.find((i) => i.name === 'topod')?.newTag).toBe(VERSION);
    const [container] = podContainers(ds) as Array<Record<string, any>>;
    expect(container?.image).toBe(`topod:${VERSION}`);
    expect(container?.image).not.toMatch(/:latest$/);
    expect(container?.imagePullPolicy).toBe('IfNotPresent');
  });

  it('docs/operating.md creates the admin token Secret the DaemonSet mounts, under the key its settings read', () => {
    const ds = find(rendered(), 'DaemonSet');
    const [container] = podContainers(ds) as Array<Record<string, any>>;
    const env = Object.fromEntries((container!.env as Array<{ name: string; value: string }>).map((e) => [e.name, e.value]));
    const tokenFile = env['TOPOD_ADMIN_TOKEN_FILE'] as string;
    const mount = (container!.volumeMounts as Array<{ name: string; mountPath: string }>).find(
      (m) => m.mountPath === path.posix.dirname(tokenFile),
    );
    const volume = (ds.spec.template.spec.volumes as Array<Record<string, any>>).find((v) => v.name === mount?.name);
    const secretName = volume?.secret.secretName as string;
    expect(secretName).toBeTruthy();
    const namespace = ds.metadata.namespace as string;
    expect(OPERATING_DOC).toContain(
      `kubectl -n ${namespace} create secret generic ${secretName} --from-literal=${path.posix.basename(tokenFile)}=`,
    );
  });

  it('why a generated Secret failed validation: kustomize folds base64 of 70 characters or more, which format: byte refuses', () => {
    const secret = (token: string): Manifest =>
      ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 't' }, type: 'Opaque', data: { token: kustomizeBase64(token) } }) as Manifest;
    // What `openssl rand -hex 32 > admin-token` gave: 65 bytes, 88 characters of base64, folded.
    const folded = kustomizeBase64(`${'a'.repeat(64)}\n`);
    expect(folded.split('\n')).toHaveLength(3);
    expect(Buffer.from(folded, 'base64').toString()).toBe(`${'a'.repeat(64)}\n`);
    expect(() => validate(secret(`${'a'.repeat(64)}\n`))).toThrow(/data/);
    expect(() => validate(secret('a'.repeat(51)))).not.toThrow();
  });

  it('fails a manifest the API server would reject (the check is not a no-op)', () => {
    const daemonSet = find(rendered(), 'DaemonSet');
    const broken = structuredClone(daemonSet);
    broken.spec.template.spec.containers[0].ports[0].containerPort = 'http';
    expect(() => validate(broken)).toThrow(/containerPort/);
    const monitor = structuredClone(find(rendered(), 'ServiceMonitor'));
    monitor.spec.endpoints[0].interval = '30 seconds';
    expect(() => validate(monitor)).toThrow(/interval/);
    expect(() => validate({ apiVersion: 'v1', kind: 'ConfigMapp', metadata: { name: 'x' } })).toThrow(/no schema/);
  });

  it('runs on GPU nodes, read-only, without privileges, probed on /healthz and /readyz', () => {
    const ds = find(rendered(), 'DaemonSet');
    const pod = ds.spec.template.spec;
    expect(pod.nodeSelector).toEqual({ 'nvidia.com/gpu.present': 'true' });
    expect(pod.automountServiceAccountToken).toBe(false);
    const [container] = podContainers(ds) as Array<Record<string, any>>;
    expect(container?.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      privileged: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(container?.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(container?.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(container?.ports.map((p: { name: string }) => p.name)).toContain('http');
    expect(container?.resources.requests).toBeDefined();
    expect(container?.resources.limits.memory).toBeDefined();
    // No GPU is requested: topod measures every GPU of its node through the runtime, as dcgm-exporter does.
    expect(JSON.stringify(container?.resources)).not.toContain('nvidia.com/gpu');
  });

  it('mounts what its settings name: the database and NFD folders from the host, the token from its Secret', () => {
    const manifests = rendered();
    const ds = find(manifests, 'DaemonSet');
    const pod = ds.spec.template.spec;
    const [container] = podContainers(ds) as Array<Record<string, any>>;
    const env = Object.fromEntries((container!.env as Array<{ name: string; value: string }>).map((e) => [e.name, e.value]));
    // Every TOPOD_* variable set is one topod reads.
    const known = new Set(SETTINGS.map((s) => s.env));
    for (const name of Object.keys(env).filter((n) => n.startsWith('TOPOD_'))) expect(known.has(name), name).toBe(true);
    expect(env['TOPOD_HOST']).toBe('0.0.0.0');
    expect(Number(env['TOPOD_PORT'])).toBe(container?.ports.find((p: { name: string }) => p.name === 'http').containerPort);
    const mountOf = (dir: string) => {
      const mount = (container!.volumeMounts as Array<{ name: string; mountPath: string }>).find((m) => m.mountPath === dir);
      expect(mount, dir).toBeDefined();
      return (pod.volumes as Array<Record<string, any>>).find((v) => v.name === mount?.name);
    };
    // Results survive pod restarts: the SQLite file's folder is the host's.
    expect(mountOf(path.posix.dirname(env['TOPOD_DB'] as string))?.hostPath).toMatchObject({
      path: '/var/lib/topod',
      type: 'DirectoryOrCreate',
    });
    expect(mountOf(env['TOPOD_NFD_FEATURES_DIR'] as string)?.hostPath.path).toBe('/etc/kubernetes/node-feature-discovery/features.d');
    expect(mountOf(env['TOPOD_LOCK_DIR'] as string)?.hostPath.path).toBe('/run/topod');
    const tokenFile = env['TOPOD_ADMIN_TOKEN_FILE'] as string;
    const secretVolume = mountOf(path.posix.dirname(tokenFile));
    // Octal as Kubernetes reads the file (YAML 1.1): owner read-only.
    expect(secretVolume?.secret.defaultMode).toBe(0o400);
    // A read-only root: HOME (the CUDA JIT cache) points at a writable emptyDir.
    expect(mountOf(env['HOME'] as string)?.emptyDir).toBeDefined();
  });

  it('is scraped by Prometheus through a headless Service that selects the DaemonSet’s pods', () => {
    const manifests = rendered();
    const ds = find(manifests, 'DaemonSet');
    const service = find(manifests, 'Service');
    const monitor = find(manifests, 'ServiceMonitor');
    const podLabels = ds.spec.template.metadata.labels as Record<string, string>;
    for (const [key, value] of Object.entries(service.spec.selector as Record<string, string>)) expect(podLabels[key], key).toBe(value);
    expect(service.spec.clusterIP).toBe('None');
    for (const [key, value] of Object.entries(monitor.spec.selector.matchLabels as Record<string, string>))
      expect(service.metadata.labels?.[key], key).toBe(value);
    const [endpoint] = monitor.spec.endpoints as Array<{ port: string; path: string }>;
    expect(endpoint?.path).toBe('/metrics');
    expect((service.spec.ports as Array<{ name: string }>).map((p) => p.name)).toContain(endpoint?.port);
  });
});
