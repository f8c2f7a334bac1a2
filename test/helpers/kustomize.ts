/**
 * What `kubectl kustomize` makes of deploy/kubernetes, for the features that
 * base uses (resources, namespace, labels, images, a secretGenerator with
 * files and no name hash) — no kubectl here, so the tests render it
 * themselves and fail on any kustomization field they do not implement.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments, parse } from 'yaml';

export type Manifest = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> }; [key: string]: unknown };

const SUPPORTED = new Set(['apiVersion', 'kind', 'namespace', 'labels', 'resources', 'images', 'secretGenerator', 'generatorOptions']);
const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition', 'RuntimeClass', 'PriorityClass']);

interface Kustomization {
  namespace?: string;
  labels?: Array<{ pairs: Record<string, string>; includeSelectors?: boolean }>;
  resources?: string[];
  images?: Array<{ name: string; newName?: string; newTag?: string }>;
  secretGenerator?: Array<{ name: string; files?: string[]; literals?: string[] }>;
  generatorOptions?: { disableNameSuffixHash?: boolean };
}

/** `files` supplies generator inputs that are not in the checkout (the admin token an admin creates). */
export function renderKustomization(dir: string, files: Record<string, string> = {}): Manifest[] {
  const k = parse(readFileSync(path.join(dir, 'kustomization.yaml'), 'utf8')) as Kustomization & Record<string, unknown>;
  const unknown = Object.keys(k).filter((key) => !SUPPORTED.has(key));
  if (unknown.length > 0) throw new Error(`kustomization fields this renderer does not implement: ${unknown.join(', ')}`);
  if ((k.secretGenerator?.length ?? 0) > 0 && k.generatorOptions?.disableNameSuffixHash !== true) throw new Error('name hashes are not implemented: set generatorOptions.disableNameSuffixHash');
  const manifests: Manifest[] = [];
  for (const resource of k.resources ?? []) {
    for (const doc of parseAllDocuments(readFileSync(path.join(dir, resource), 'utf8'))) {
      if (doc.errors.length > 0) throw new Error(`${resource}: ${doc.errors.map((e) => e.message).join('; ')}`);
      const value = doc.toJS() as Manifest | null;
      if (value) manifests.push(value);
    }
  }
  for (const generator of k.secretGenerator ?? []) {
    const data: Record<string, string> = {};
    for (const entry of generator.files ?? []) {
      const [key, file] = entry.includes('=') ? (entry.split('=', 2) as [string, string]) : [path.basename(entry), entry];
      const content = files[file] ?? readFileSync(path.join(dir, file), 'utf8');
      data[key] = Buffer.from(content).toString('base64');
    }
    for (const literal of generator.literals ?? []) {
      const [key, value] = literal.split('=', 2) as [string, string];
      data[key] = Buffer.from(value).toString('base64');
    }
    manifests.push({ apiVersion: 'v1', kind: 'Secret', metadata: { name: generator.name }, type: 'Opaque', data });
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
  const spec = (manifest['spec'] as { template?: { spec?: { containers?: unknown[]; initContainers?: unknown[] } } } | undefined)?.template?.spec;
  return [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])] as Array<{ name: string; image: string }>;
}
