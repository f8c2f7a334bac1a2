/**
 * Node labels a scheduler can select on, from the node's served documents,
 * and the NFD `features.d` file that publishes them. Pure.
 *
 * Node labels describe the node, not one GPU: a value is the smallest any
 * measured GPU gave (a pod that selects on `l2.bytes > X` must get at least
 * X whichever GPU it lands on), and `gpus.agree` says whether same-model GPUs
 * measured alike. Sizes are bytes as integers, so `Gt`/`Lt` node-affinity
 * operators work on them. A label whose value is not known is left out rather
 * than given a placeholder.
 *
 * Every name is under LABEL_PREFIX (docs/operating.md "Run on a cluster" lists them);
 * NFD ≥ 0.13 accepts any namespace outside kubernetes.io by default.
 */
import { nodeAgreement } from './agreement.js';
import type { GpuFacts } from './gpu-documents.js';

export const LABEL_PREFIX = 'topod.io/';

/** The label names topod writes (after LABEL_PREFIX); `mig-<profile>.l2-bytes` is one per MIG profile. */
export const LABEL_NAMES = {
  measuredGpus: 'gpus.measured',
  agree: 'gpus.agree',
  simulated: 'simulated',
  l1BytesPerSm: 'l1.bytes-per-sm',
  l2Bytes: 'l2.bytes',
  l2SegmentBytes: 'l2.segment-bytes',
  readBandwidthClass: 'memory.read-bandwidth-class',
  clusterCapable: 'cluster-capable',
  migMode: 'mig.mode',
  migProfileL2: (profile: string) => `mig-${profile}.l2-bytes`,
} as const;

/** Device-memory read bandwidth classes are GB/s rounded down to this step: re-measurement noise does not relabel a node. */
export const BANDWIDTH_CLASS_STEP_GBPS = 500;

/** Hopper (compute capability 9) introduced thread-block clusters. */
const CLUSTER_MIN_MAJOR = 9;

const NAME_PART = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * What the API server says about a label key (apimachinery IsQualifiedName):
 * an optional DNS-subdomain prefix (≤ 253) and "/", then a name of ≤ 63
 * characters, alphanumeric at both ends, `-_.` inside. [] when valid.
 */
export function labelKeyErrors(key: string): string[] {
  const slash = key.indexOf('/');
  const [prefix, name] = slash < 0 ? [null, key] : [key.slice(0, slash), key.slice(slash + 1)];
  const errors: string[] = [];
  if (prefix !== null) {
    if (prefix.length === 0) errors.push(`${key}: prefix part must be non-empty`);
    else if (prefix.length > 253) errors.push(`${key}: prefix part must be no more than 253 characters`);
    else if (!DNS_SUBDOMAIN.test(prefix)) errors.push(`${key}: prefix part must be a lowercase RFC 1123 subdomain`);
  }
  if (name.length === 0) errors.push(`${key}: name part must be non-empty`);
  else if (name.length > 63) errors.push(`${key}: name part must be no more than 63 characters`);
  else if (!NAME_PART.test(name))
    errors.push(
      `${key}: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
    );
  return errors;
}

/** apimachinery IsValidLabelValue: empty, or ≤ 63 characters, alphanumeric at both ends, `-_.` inside. */
export function labelValueErrors(value: string): string[] {
  if (value === '') return [];
  if (value.length > 63) return [`"${value}": must be no more than 63 characters`];
  if (!NAME_PART.test(value))
    return [`"${value}": must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`];
  return [];
}

/** A MIG profile name as a label name part: "1g.10gb+me" → "1g.10gb-me" ('+' is not allowed). */
export function profileLabelPart(profile: string): string {
  return profile
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '');
}

function minimum(values: Array<number | null | undefined>): number | null {
  const known = values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  return known.length === 0 ? null : Math.min(...known);
}

const integer = (value: number | null): string | null => (value === null ? null : String(Math.floor(value)));

/** The labels for the node's present GPUs, keys with LABEL_PREFIX, sorted by key. */
export function nodeLabels(gpus: GpuFacts[]): Record<string, string> {
  const labels: Record<string, string | null> = {};
  const measured = gpus.filter((g) => g.measured !== null);
  const attribute = (element: string, name: string) => minimum(measured.map((g) => g.measured?.elements[element]?.[name]?.value));

  labels[LABEL_NAMES.measuredGpus] = String(measured.length);
  const agreement = nodeAgreement(gpus).agree;
  labels[LABEL_NAMES.agree] = agreement === null ? null : String(agreement);
  labels[LABEL_NAMES.simulated] = measured.length === 0 ? null : String(measured.some((g) => g.simulated));
  labels[LABEL_NAMES.l1BytesPerSm] = integer(attribute('l1', 'size'));
  labels[LABEL_NAMES.l2Bytes] = integer(attribute('l2', 'size'));
  labels[LABEL_NAMES.l2SegmentBytes] = integer(attribute('l2', 'segmentSize'));
  const bandwidth = attribute('deviceMemory', 'readBandwidth');
  labels[LABEL_NAMES.readBandwidthClass] =
    bandwidth === null ? null : String(Math.floor(bandwidth / 1e9 / BANDWIDTH_CLASS_STEP_GBPS) * BANDWIDTH_CLASS_STEP_GBPS);
  const majors = measured.map((g) => g.measured?.computeCapabilityMajor ?? null);
  labels[LABEL_NAMES.clusterCapable] =
    majors.length === 0 || majors.includes(null) ? null : String(majors.every((m) => (m ?? 0) >= CLUSTER_MIN_MAJOR));

  const modes = new Set(gpus.map((g) => g.mig?.mode ?? null).filter((m) => m !== null));
  labels[LABEL_NAMES.migMode] = modes.size === 0 ? null : modes.size === 1 ? [...modes][0]! : 'mixed';
  const shares = new Map<string, Array<number | null>>();
  for (const gpu of gpus)
    for (const p of gpu.mig?.profiles ?? [])
      shares.set(profileLabelPart(p.profile), [...(shares.get(profileLabelPart(p.profile)) ?? []), p.l2Bytes]);
  for (const [profile, bytes] of shares) if (profile !== '') labels[LABEL_NAMES.migProfileL2(profile)] = integer(minimum(bytes));

  const out: Record<string, string> = {};
  for (const key of Object.keys(labels).sort()) {
    const value = labels[key];
    if (value !== null && value !== undefined) out[`${LABEL_PREFIX}${key}`] = value;
  }
  return out;
}

/** Every label's key and value checked; throws listing all that the API server would refuse. */
export function assertValidLabels(labels: Record<string, string>): void {
  const errors = Object.entries(labels).flatMap(([key, value]) => [...labelKeyErrors(key), ...labelValueErrors(value)]);
  if (errors.length > 0) throw new Error(`invalid node labels: ${errors.join('; ')}`);
}

/** The NFD limit on one features.d file. */
export const FEATURE_FILE_MAX_BYTES = 64 * 1024;

/**
 * The features.d file NFD's local source reads: `name=value` lines and `#`
 * comments. Deterministic (no timestamp), so an unchanged state gives the same
 * bytes and the file is not rewritten.
 */
export function featureFileText(labels: Record<string, string>, header: string): string {
  assertValidLabels(labels);
  const lines = [`# ${header}`, '# Written by topod whenever its measurements or the MIG state change; edits are overwritten.'];
  for (const [key, value] of Object.entries(labels)) lines.push(`${key}=${value}`);
  const text = `${lines.join('\n')}\n`;
  if (Buffer.byteLength(text) > FEATURE_FILE_MAX_BYTES)
    throw new Error(`the NFD feature file would be ${Buffer.byteLength(text)} bytes, over NFD's ${FEATURE_FILE_MAX_BYTES}`);
  return text;
}

/** Parses a features.d file as NFD does (comments and directives skipped; no value = "true"). */
export function parseFeatureFile(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq < 0) labels[line] = 'true';
    else labels[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return labels;
}
