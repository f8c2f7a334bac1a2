/**
 * Prometheus metrics (prom-client) in dcgm-exporter's label conventions:
 * every GPU series carries `gpu` (index), `UUID`, `device` (nvidia<index>),
 * `pci_bus_id` and `modelName`; MIG series add `GPU_I_ID` and
 * `GPU_I_PROFILE` (the profile as dcgm-exporter spells it, "3g.40gb").
 *
 * Measured values are read from the served documents at scrape time, element
 * by element and attribute by attribute, whatever the document holds, so an
 * element the discovery learns to measure shows up without a change here. The
 * series of every scrape are rebuilt from scratch: a GPU that disappears or a
 * MIG instance that is destroyed leaves no stale series behind (dcgm-exporter
 * keeps them after a MIG reconfiguration).
 *
 * Cardinality is bounded by the hardware, never by requests: per GPU at most
 * elements (12) × attributes (≈12) × 2 (value, confidence) element series, 3
 * latency statistics per element, 5 series per MIG instance (≤ 7 per GPU) and
 * 1 per MIG profile (≤ 8); HTTP durations are labelled by route template,
 * method and status code (unmatched paths share route="unmatched").
 *
 * promtool's linter flags dcgm-exporter's camelCase label names (`UUID`,
 * `modelName`, `GPU_I_ID`); they are kept on purpose, so dashboards written
 * for dcgm-exporter join on them. prom-client's default Node.js metrics are
 * left out: three of its gauges end in `_total`, which the linter rejects.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { GpuTopologyDocument, ValueUnit } from '../model/document.js';
import type { GpuSummary } from '../model/gpu.js';
import type { TopodEvent, TopologyApi } from '../model/topology-api.js';
import type { DynamicSnapshot } from '../dynamic/types.js';
import type { PreparedDocument } from '../model/topology-api.js';
import { elementEntries, isMigDocument, latencyAttributes, measuredAttributes, parsedDocument } from './documents.js';

export const GPU_LABELS = ['gpu', 'UUID', 'device', 'pci_bus_id', 'modelName'] as const;
export const MIG_LABELS = [...GPU_LABELS, 'GPU_I_ID', 'GPU_I_PROFILE'] as const;
const ELEMENT_LABELS = [...GPU_LABELS, 'element', 'attribute'] as const;

type GpuLabels = Record<(typeof GPU_LABELS)[number], string>;
type WrittenSeries = [Gauge<string>, Record<string, string>];

const labelsKey = (labels: GpuLabels): string => GPU_LABELS.map((name) => labels[name]).join('\u0000');

/** What the metrics need of the NVML poller (server/dynamic/poller.ts): each read, and how long it took. */
export interface PollSource {
  on(event: 'snapshot', listener: (snapshot: DynamicSnapshot) => void): unknown;
  off(event: 'snapshot', listener: (snapshot: DynamicSnapshot) => void): unknown;
  readonly lastReadDurationMs: number | null;
}

/** Metric name per document unit; a unit Prometheus has no base unit for is converted (ns → seconds). */
const UNIT_METRICS: Record<ValueUnit, { suffix: string; scale: number; help: string }> = {
  bytes: { suffix: 'bytes', scale: 1, help: 'sizes: cache size, line size, fetch/fill granularity, L2 segment' },
  cycles: { suffix: 'cycles', scale: 1, help: 'cycle counts other than load latencies (miss penalties)' },
  ns: { suffix: 'seconds', scale: 1e-9, help: 'times measured in nanoseconds' },
  'bytes/s': { suffix: 'bytes_per_second', scale: 1, help: 'bandwidths' },
  count: { suffix: 'amount', scale: 1, help: 'counts: how many of the element there are (per SM or per GPU)' },
  hz: { suffix: 'hertz', scale: 1, help: 'frequencies' },
};

export const PROBE_DURATION_BUCKETS_SECONDS = [1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800];
export const HTTP_DURATION_BUCKETS_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
export const POLL_DURATION_BUCKETS_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 2];

/** dcgm-exporter's GPU_I_PROFILE: NVML's "MIG 3g.40gb" → "3g.40gb". */
export function profileLabel(name: string | null): string {
  return name === null ? 'unknown' : name.replace(/^MIG\s+/, '');
}

function gpuLabels(gpu: GpuSummary): GpuLabels {
  return { gpu: String(gpu.index), UUID: gpu.uuid, device: `nvidia${gpu.index}`, pci_bus_id: gpu.pciBusId ?? '', modelName: gpu.name };
}

/** An absent GPU holds no index: the GPU now in its slot owns `gpu` and `device`, so joins on them stay one-to-one. */
function absentGpuLabels(gpu: GpuSummary): GpuLabels {
  return { ...gpuLabels(gpu), gpu: '', device: '' };
}

export interface TopodMetricsOptions {
  topology: TopologyApi;
  poller?: PollSource | null;
  now?: () => number;
}

export class TopodMetrics {
  readonly registry = new Registry();
  private readonly topology: TopologyApi;
  private readonly now: () => number;
  private readonly unsubscribe: () => void;
  private readonly detachPoller: () => void;
  /** Per GPU: the document its series were written from, and those series. */
  private readonly written = new Map<string, { document: PreparedDocument | null; labelsKey: string; series: WrittenSeries[] }>();

  private readonly elementValues = new Map<ValueUnit, Gauge<(typeof ELEMENT_LABELS)[number]>>();
  private readonly confidence: Gauge<(typeof ELEMENT_LABELS)[number]>;
  private readonly latencyCycles: Gauge<(typeof ELEMENT_LABELS)[number] | 'statistic'>;
  private readonly latencySeconds: Gauge<(typeof ELEMENT_LABELS)[number]>;
  private readonly gpuInfo: Gauge<(typeof GPU_LABELS)[number] | 'driver_version' | 'probe_status' | 'simulated'>;
  private readonly present: Gauge<(typeof GPU_LABELS)[number]>;
  private readonly resultAge: Gauge<(typeof GPU_LABELS)[number]>;
  private readonly stale: Gauge<(typeof GPU_LABELS)[number]>;
  private readonly migL2Share: Gauge<(typeof MIG_LABELS)[number]>;
  private readonly migReachable: Gauge<(typeof MIG_LABELS)[number]>;
  private readonly migSlices: Gauge<(typeof MIG_LABELS)[number]>;
  private readonly migSms: Gauge<(typeof MIG_LABELS)[number]>;
  private readonly migMemory: Gauge<(typeof MIG_LABELS)[number]>;
  private readonly profileL2Share: Gauge<(typeof GPU_LABELS)[number] | 'GPU_I_PROFILE'>;
  private readonly activeJobs: Gauge<'state'>;
  private readonly jobsFinished: Counter<'state'>;
  private readonly jobDuration: Histogram<'state'>;
  private readonly pollDuration: Histogram;
  private readonly pollFailures: Counter;
  readonly httpDuration: Histogram<'method' | 'route' | 'status_code'>;

  constructor(options: TopodMetricsOptions) {
    this.topology = options.topology;
    this.now = options.now ?? Date.now;
    const registers = [this.registry];
    for (const [unit, spec] of Object.entries(UNIT_METRICS) as Array<[ValueUnit, (typeof UNIT_METRICS)[ValueUnit]]>) {
      this.elementValues.set(
        unit,
        new Gauge({ name: `topod_element_${spec.suffix}`, help: `Measured or known value of a memory element's attribute, in ${spec.suffix} (${spec.help})`, labelNames: ELEMENT_LABELS, registers }),
      );
    }
    this.confidence = new Gauge({ name: 'topod_element_confidence_ratio', help: 'How sure topod is of a measured attribute (0..1)', labelNames: ELEMENT_LABELS, registers });
    this.latencyCycles = new Gauge({
      name: 'topod_element_latency_cycles',
      help: 'Load latency of a memory element in SM cycles (statistic: mean, p50, p95)',
      labelNames: [...ELEMENT_LABELS, 'statistic'],
      registers,
    });
    this.latencySeconds = new Gauge({ name: 'topod_element_latency_seconds', help: 'Mean load latency at the measured SM clock', labelNames: ELEMENT_LABELS, registers });
    this.gpuInfo = new Gauge({
      name: 'topod_gpu_info',
      help: 'Always 1: a GPU topod knows, with its driver, probe status and whether the simulator measured it',
      labelNames: [...GPU_LABELS, 'driver_version', 'probe_status', 'simulated'],
      registers,
    });
    this.present = new Gauge({
      name: 'topod_gpu_present',
      help: '1 while NVML or the backend lists the GPU; 0 for a GPU that is gone (its gpu and device labels empty, no other series)',
      labelNames: GPU_LABELS,
      registers,
    });
    this.resultAge = new Gauge({ name: 'topod_result_age_seconds', help: 'Seconds since the served result was measured (probe finish)', labelNames: GPU_LABELS, registers });
    this.stale = new Gauge({ name: 'topod_result_stale', help: '1 when the served result is for another driver or probe version (a re-probe is queued)', labelNames: GPU_LABELS, registers });
    this.migL2Share = new Gauge({ name: 'topod_mig_l2_share_bytes', help: 'L2 a MIG GPU instance owns: L2 x its memory slices / the GPU memory slices', labelNames: MIG_LABELS, registers });
    this.migReachable = new Gauge({ name: 'topod_mig_l2_reachable_per_sm_bytes', help: 'L2 one SM of the instance can reach: min(share, measured L2 segment)', labelNames: MIG_LABELS, registers });
    this.migSlices = new Gauge({ name: 'topod_mig_memory_slices', help: 'Memory slices of a MIG GPU instance', labelNames: MIG_LABELS, registers });
    this.migSms = new Gauge({ name: 'topod_mig_multiprocessors', help: 'SMs of a MIG GPU instance', labelNames: MIG_LABELS, registers });
    this.migMemory = new Gauge({ name: 'topod_mig_memory_bytes', help: 'Device memory of a MIG GPU instance', labelNames: MIG_LABELS, registers });
    this.profileL2Share = new Gauge({ name: 'topod_mig_profile_l2_share_bytes', help: 'L2 share an instance of this GPU-instance profile would get', labelNames: [...GPU_LABELS, 'GPU_I_PROFILE'], registers });
    this.activeJobs = new Gauge({ name: 'topod_probe_jobs', help: 'Probe jobs queued or running now', labelNames: ['state'], registers });
    this.jobsFinished = new Counter({ name: 'topod_probe_jobs_finished_total', help: 'Probe jobs that ended, by end state', labelNames: ['state'], registers });
    this.jobDuration = new Histogram({
      name: 'topod_probe_job_duration_seconds',
      help: 'Wall time of probe jobs from start to end, by end state',
      labelNames: ['state'],
      buckets: PROBE_DURATION_BUCKETS_SECONDS,
      registers,
    });
    this.pollDuration = new Histogram({ name: 'topod_nvml_poll_duration_seconds', help: 'Duration of one NVML state read', buckets: POLL_DURATION_BUCKETS_SECONDS, registers });
    this.pollFailures = new Counter({ name: 'topod_nvml_poll_failures_total', help: 'NVML state reads that found NVML unavailable', registers });
    this.httpDuration = new Histogram({
      name: 'topod_http_request_duration_seconds',
      help: 'HTTP request durations by route template, method and status code',
      labelNames: ['method', 'route', 'status_code'],
      buckets: HTTP_DURATION_BUCKETS_SECONDS,
      registers,
    });
    for (const state of ['succeeded', 'failed', 'cancelled']) this.jobsFinished.inc({ state }, 0);
    this.pollFailures.inc(0);

    this.unsubscribe = this.topology.subscribe((event) => this.onEvent(event));
    const poller = options.poller ?? null;
    if (poller) {
      const onSnapshot = (snapshot: DynamicSnapshot): void => {
        if (poller.lastReadDurationMs !== null) this.pollDuration.observe(poller.lastReadDurationMs / 1000);
        if (!snapshot.available) this.pollFailures.inc();
      };
      poller.on('snapshot', onSnapshot);
      this.detachPoller = () => poller.off('snapshot', onSnapshot);
    } else {
      this.detachPoller = () => undefined;
    }
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** Reads every GPU's document into the gauges, then renders the exposition text. */
  async render(): Promise<string> {
    this.refresh();
    return this.registry.metrics();
  }

  /**
   * Brings the document-derived series up to the documents served now. A GPU
   * whose document object is unchanged keeps its series (only its result age
   * moves); a changed or vanished one has its old series removed first, so
   * nothing stale survives a MIG reconfiguration.
   */
  refresh(): void {
    for (const gauge of [this.gpuInfo, this.present, this.resultAge, this.stale]) gauge.reset();
    const active = { queued: 0, running: 0 };
    const seen = new Set<string>();
    for (const gpu of this.topology.listGpus()) {
      seen.add(gpu.uuid);
      if (!gpu.present) {
        // Gone (unplugged, swapped, its driver unloaded): one series says so, everything measured on it goes.
        this.present.set(absentGpuLabels(gpu), 0);
        this.forget(gpu.uuid);
        continue;
      }
      const labels = gpuLabels(gpu);
      this.gpuInfo.set({ ...labels, driver_version: gpu.driverVersion, probe_status: gpu.probe.status, simulated: String(gpu.simulated) }, 1);
      this.present.set(labels, 1);
      this.stale.set(labels, gpu.probe.stale ? 1 : 0);
      if (gpu.probe.status === 'queued' || gpu.probe.status === 'running') active[gpu.probe.status] += 1;
      const lookup = this.topology.getTopology(gpu.uuid);
      const prepared = lookup.kind === 'ready' ? lookup.document : null;
      const document = prepared ? parsedDocument(prepared) : null;
      const gpuDocument = document && !isMigDocument(document) ? document : null;
      if (gpuDocument) {
        const finished = Date.parse(gpuDocument.probe.finishedAt);
        if (Number.isFinite(finished)) this.resultAge.set(labels, Math.max(0, (this.now() - finished) / 1000));
      }
      const previous = this.written.get(gpu.uuid);
      const key = labelsKey(labels);
      if (previous && previous.document === prepared && previous.labelsKey === key) continue;
      this.forget(gpu.uuid);
      const series: WrittenSeries[] = [];
      if (gpuDocument) this.documentSeries(labels, gpuDocument, series);
      this.written.set(gpu.uuid, { document: prepared, labelsKey: key, series });
    }
    for (const uuid of [...this.written.keys()]) if (!seen.has(uuid)) this.forget(uuid);
    this.activeJobs.set({ state: 'queued' }, active.queued);
    this.activeJobs.set({ state: 'running' }, active.running);
  }

  /** Removes every document-derived series written for a GPU. */
  private forget(uuid: string): void {
    for (const [gauge, labels] of this.written.get(uuid)?.series ?? []) gauge.remove(labels);
    this.written.delete(uuid);
  }

  private documentSeries(labels: GpuLabels, document: GpuTopologyDocument, written: WrittenSeries[]): void {
    const set = (gauge: Gauge<string>, series: Record<string, string>, value: number): void => {
      gauge.set(series, value);
      written.push([gauge, series]);
    };
    for (const [element, topology] of elementEntries(document)) {
      for (const [attribute, value] of measuredAttributes(topology)) {
        const gauge = this.elementValues.get(value.unit);
        const spec = UNIT_METRICS[value.unit];
        if (!gauge || !spec) continue;
        const series = { ...labels, element, attribute };
        set(gauge as Gauge<string>, series, value.value * spec.scale);
        if (value.confidence !== undefined) set(this.confidence as Gauge<string>, series, value.confidence);
      }
      for (const [attribute, latency] of latencyAttributes(topology)) {
        const series = { ...labels, element, attribute };
        set(this.latencyCycles as Gauge<string>, { ...series, statistic: 'mean' }, latency.mean);
        set(this.latencyCycles as Gauge<string>, { ...series, statistic: 'p50' }, latency.p50);
        set(this.latencyCycles as Gauge<string>, { ...series, statistic: 'p95' }, latency.p95);
        if (latency.meanNs !== undefined) set(this.latencySeconds as Gauge<string>, series, latency.meanNs * 1e-9);
        if (latency.confidence !== undefined) set(this.confidence as Gauge<string>, series, latency.confidence);
      }
    }
    const mig = document.mig;
    if (!mig) return;
    for (const profile of mig.profiles) {
      if (profile.l2.bytes !== null) set(this.profileL2Share as Gauge<string>, { ...labels, GPU_I_PROFILE: profileLabel(profile.name) }, profile.l2.bytes);
    }
    for (const instance of mig.instances) {
      const series = { ...labels, GPU_I_ID: String(instance.gpuInstanceId), GPU_I_PROFILE: profileLabel(instance.profileName) };
      if (instance.l2.bytes !== null) set(this.migL2Share as Gauge<string>, series, instance.l2.bytes);
      if (instance.l2.reachablePerSmBytes !== null) set(this.migReachable as Gauge<string>, series, instance.l2.reachablePerSmBytes);
      set(this.migSlices as Gauge<string>, series, instance.l2.memorySlices);
      if (instance.multiprocessorCount !== null) set(this.migSms as Gauge<string>, series, instance.multiprocessorCount);
      if (instance.memorySizeBytes !== null) set(this.migMemory as Gauge<string>, series, instance.memorySizeBytes);
    }
  }

  private onEvent(event: TopodEvent): void {
    if (event.type !== 'probe.succeeded' && event.type !== 'probe.failed' && event.type !== 'probe.cancelled') return;
    const state = event.job.state;
    this.jobsFinished.inc({ state });
    const started = event.job.startedAt === null ? NaN : Date.parse(event.job.startedAt);
    const finished = event.job.finishedAt === null ? NaN : Date.parse(event.job.finishedAt);
    if (Number.isFinite(started) && Number.isFinite(finished)) this.jobDuration.observe({ state }, Math.max(0, (finished - started) / 1000));
  }

  close(): void {
    this.unsubscribe();
    this.detachPoller();
    this.registry.clear();
  }
}
