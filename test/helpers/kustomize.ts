/**
 * What `kubectl kustomize` makes of deploy/kubernetes and its overlays, for
 * the features they use (resources, directories of other kustomizations,
 * namespace, labels, images, strategic-merge patches of maps, and a
 * secretGenerator with no name hash), without kubectl: CI's machines may
 * have none. It fails on any kustomization field it does not implement, and
 * where kubectl is installed a test compares its output with kubectl's
 * (test/integration/deploy/kustomize.test.ts).
 *
 * It renders as kustomize does where that matters to validation:
 * - YAML is read as Kubernetes reads it, YAML 1.1 (`defaultMode: 0400` is
 *   octal, 256; YAML 1.2 would read 400);
 * - a generated Secret's base64 is folded into 70-character lines, each
 *   ending in a newline, once it reaches 70 characters (kyaml's
 *   encodeBase64). The API server's decoder skips the newlines, but the
 *   OpenAPI schema's `format: byte` does not: a token file of 64 hex digits
 *   and a newline made a Secret that failed validation, while this renderer,
 *   encoding on one line, showed it valid.
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';

export type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [key: string]: unknown;
};

const SUPPORTED = new Set([
  'apiVersion',
  'kind',
  'namespace',
  'labels',
  'resources',
  'images',
  'secretGenerator',
  'generatorOptions',
  'patches',
]);
const CLUSTER_SCOPED = new Set([
  'Namespace',
  'ClusterRole',
  'ClusterRoleBinding',
  'CustomResourceDefinition',
  'RuntimeClass',
  'PriorityClass',
]);
/** Kubernetes reads manifests as YAML 1.1. */
const YAML_OPTIONS = { version: '1.1' } as const;

interface Kustomization {
  namespace?: string;
  labels?: Array<{ pairs: Record<string, string>; includeSelectors?: boolean }>;
  resources?: string[];
  images?: Array<{ name: string; newName?: string; newTag?: string }>;
  secretGenerator?: Array<{ name: string; files?: string[]; literals?: string[] }>;
  generatorOptions?: { disableNameSuffixHash?: boolean };
  patches?: Array<{ path?: string; patch?: string; target?: Record<string, unknown> }>;
}

/** Base64 as kustomize writes a generated Secret's data (kyaml/yaml/datamap.go encodeBase64): 70-character lines, each ending in "\n", once it reaches 70. */
export function kustomizeBase64(content: string | Buffer): string {
  const LINE = 70;
  const encoded = Buffer.from(content).toString('base64');
  if (encoded.length < LINE) return encoded;
  const lines: string[] = [];
  for (let i = 0; i < encoded.length; i += LINE) lines.push(`${encoded.slice(i, i + LINE)}\n`);
  return lines.join('');
}

type Json = Record<string, unknown>;
const isMap = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A strategic-merge patch of maps: keys merged, deeper maps merged; a list in a patch would need SMP's merge keys, not implemented. */
function mergePatch(target: Json, patch: Json, where: string): void {
  for (const [key, value] of Object.entries(patch)) {
    if (Array.isArray(value)) throw new Error(`${where}: patching a list (${key}) is not implemented`);
    if (isMap(value) && isMap(target[key])) mergePatch(target[key] as Json, value, `${where}.${key}`);
    else target[key] = value;
  }
}

/** `files` supplies generator inputs that are not in the checkout, by the path the kustomization names. */
export function renderKustomization(dir: string, files: Record<string, string> = {}): Manifest[] {
  const k = parse(readFileSync(path.join(dir, 'kustomization.yaml'), 'utf8'), YAML_OPTIONS) as Kustomization & Record<string, unknown>;
  const unknown = Object.keys(k).filter((key) => !SUPPORTED.has(key));
  if (unknown.length > 0) throw new Error(`kustomization fields this renderer does not implement: ${unknown.join(', ')}`);
  if ((k.secretGenerator?.length ?? 0) > 0 && k.generatorOptions?.disableNameSuffixHash !== true)
    throw new Error('name hashes are not implemented: set generatorOptions.disableNameSuffixHash');
  const manifests: Manifest[] = [];
  for (const resource of k.resources ?? []) {
    const at = path.join(dir, resource);
    if (statSync(at).isDirectory()) {
      manifests.push(...renderKustomization(at, files));
      continue;
    }
    for (const doc of parseAllDocuments(readFileSync(at, 'utf8'), YAML_OPTIONS)) {
      if (doc.errors.length > 0) throw new Error(`${resource}: ${doc.errors.map((e) => e.message).join('; ')}`);
      const value = doc.toJS() as Manifest | null;
      if (value) manifests.push(value);
    }
  }
  for (const generator of k.secretGenerator ?? []) {
    const data: Record<string, string> = {};
    for (const entry of generator.files ?? []) {
      const [key, file] = entry.includes('=') ? (entry.split('=', 2) as [string, string]) : [path.basename(entry), entry];
      data[key] = kustomizeBase64(files[file] ?? readFileSync(path.join(dir, file)));
    }
    for (const literal of generator.literals ?? []) {
      const [key, value] = literal.split('=', 2) as [string, string];
      data[key] = kustomizeBase64(value);
    }
    manifests.push({ apiVersion: 'v1', kind: 'Secret', metadata: { name: generator.name }, type: 'Opaque', data });
  }
  for (const entry of k.patches ?? []) {
    if (entry.target) throw new Error('patches[].target is not implemented: name the object in the patch itself');
    const patch = parse(entry.path ? readFileSync(path.join(dir, entry.path), 'utf8') : (entry.patch ?? ''), YAML_OPTIONS) as Manifest;
    const target = manifests.find(
      (m) => m.apiVersion === patch.apiVersion && m.kind === patch.kind && m.metadata.name === patch.metadata.name,
    );
    if (!target) throw new Error(`patch ${entry.path ?? ''}: no ${patch.kind} ${patch.metadata.name} to patch`);
    const { apiVersion: _apiVersion, kind: _kind, metadata, ...rest } = patch;
    const { name: _name, ...metadataRest } = metadata;
    mergePatch(
      target,
      { ...rest, ...(Object.keys(metadataRest).length > 0 ? { metadata: metadataRest } : {}) },
      `${patch.kind} ${patch.metadata.name}`,
    );
  }
  for (const manifest of manifests) {
    if (k.namespace && !CLUSTER_SCOPED.has(manifest.kind)) manifest.metadata.namespace = k.namespace;
    if (manifest.kind === 'Namespace' && k.namespace) manifest.metadata.name = k.namespace;
    for (const { pairs, includeSelectors } of k.labels ?? []) {
      if (includeSelectors) throw new Error('labels.includeSelectors is not implemented');
      manifest.metadata.labels = { ...manifest.metadata.labels, ...pairs };
    }
    for (const container of podContainers(manifest)) {
      const image = k.images?.find((i) => container.image === i.name || container.image.startsWith(`${i.name}:`));
      if (image) container.image = `${image.newName ?? image.name}${image.newTag ? `:${image.newTag}` : ''}`;
    }
  }
  return manifests;
}

/** The containers (and init containers) of a workload's pod template. */
export function podContainers(manifest: Manifest): Array<{ name: string; image: string; [key: string]: unknown }> {
  const spec = (manifest['spec'] as { template?: { spec?: { containers?: unknown[]; initContainers?: unknown[] } } } | undefined)?.template
    ?.spec;
  return [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])] as Array<{ name: string; image: string }>;
}
