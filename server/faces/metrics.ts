/**
 * Prometheus metrics (prom-client) in dcgm-exporter's label conventions:
 * every GPU series carries `gpu` (index), `UUID`, `pci_bus_id`, `device`
 * (nvidia<index>), `modelName`, `Hostname` and `DCGM_FI_DRIVER_VERSION`, as
 * dcgm-exporter's do, so `on(UUID, Hostname)` joins topod's series with
 * dcgm-exporter's; MIG series add `GPU_I_ID` and `GPU_I_PROFILE` (the
 * profile as dcgm-exporter spells it, "3g.40gb").
 *
 * A value the document gives as a bound (the constant L1.5: at least 64 KiB)
 * is never a plain value: it is `topod_element_bound_<unit>` with `bound`
 * (lower, upper), and has no confidence series. A family is written only
 * while some series of it is: a unit no element carries adds no empty
 * HELP/TYPE block.
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
 * latency statistics per element, 5 series per MIG instance (≤ 7 per GPU),
 * 1 per MIG profile (≤ 8) and about a dozen for the conditions the result
 * was measured under (one per clocks event reason NVML names, ≤ 10); HTTP durations are labelled by route template,
 * method and status code (unmatched paths share route="unmatched").
 *
 * promtool's linter flags dcgm-exporter's camelCase label names (`UUID`,
 * `modelName`, `GPU_I_ID`); they are kept on purpose, so dashboards written
 * for dcgm-exporter join on them. prom-client's default Node.js metrics are
 * left out: three of its gauges end in `_total`, which the linter rejects.
 */
import { hostname as osHostname } from 'node:os';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ProbeConditions } from '../model/conditions-schema.js';
import type { GpuTopologyDocument, ValueUnit } from '../model/document.js';
import type { GpuSummary } from '../model/gpu.js';
import type { TopodEvent, TopologyApi } from '../model/topology-api.js';
import type { DynamicSnapshot } from '../dynamic/types.js';
import type { PreparedDocument } from '../model/topology-api.js';
import { measuredWhileBusy } from './conditions.js';
import { elementEntries, isMigDocument, latencyAttributes, measuredAttributes, parsedDocument } from './documents.js';

/** dcgm-exporter's labels, in its order. */
export const GPU_LABELS = ['gpu', 'UUID', 'pci_bus_id', 'device', 'modelName', 'Hostname', 'DCGM_FI_DRIVER_VERSION'] as const;
export const MIG_LABELS = [...GPU_LABELS, 'GPU_I_ID', 'GPU_I_PROFILE'] as const;
const ELEMENT_LABELS = [...GPU_LABELS, 'element', 'attribute'] as const;
/** Element value series: `per` (sm, gpu) on counts, `bound` (lower, upper) on bounds. */
const ELEMENT_VALUE_LABELS = [...ELEMENT_LABELS, 'per', 'bound'] as const;

type GpuLabels = Record<(typeof GPU_LABELS)[number], string>;
type WrittenSeries = [Gauge<string>, Record<string, string>];

const labelsKey = (labels: GpuLabels): string => GPU_LABELS.map((name) => labels[name]).join('\u0000');

/** What the metrics need of the NVML poller (server/dynamic/poller.ts): each read, and how long it took. */
export interface PollSource {
  on(event: 'snapshot', listener: (snapshot: DynamicSnapshot) => void): unknown;
  off(event: 'snapshot', listener: (snapshot: DynamicSnapshot) => void): unknown;
  readonly lastReadDurationMs: number | null;
}

/**
 * Metric name per document unit, in Prometheus base units (the document's
 * ns become seconds). `instances` counts how many of an element there are
 * (named `topod_element_amount` before: a name without a unit).
 */
export const UNIT_METRICS: Record<ValueUnit, { suffix: string; scale: number; help: string }> = {
  bytes: { suffix: 'bytes', scale: 1, help: 'sizes: cache size, line size, fetch/fill granularity, L2 segment' },
  cycles: { suffix: 'cycles', scale: 1, help: 'cycle counts other than load latencies (miss penalties)' },
  ns: { suffix: 'seconds', scale: 1e-9, help: 'times' },
  'bytes/s': { suffix: 'bytes_per_second', scale: 1, help: 'bandwidths' },
  count: { suffix: 'instances', scale: 1, help: 'how many of the element there are, per SM or per GPU (label per)' },
  hz: { suffix: 'hertz', scale: 1, help: 'frequencies' },
};

/** The element value family of a unit: `topod_element_<unit>`, or for bounds `topod_element_bound_<unit>`. */
export function elementMetricName(unit: ValueUnit, bound: boolean): string {
  return `topod_element_${bound ? 'bound_' : ''}${UNIT_METRICS[unit].suffix}`;
}

export const PROBE_DURATION_BUCKETS_SECONDS = [1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800];
export const HTTP_DURATION_BUCKETS_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
export const POLL_DURATION_BUCKETS_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 2];

/** dcgm-exporter's GPU_I_PROFILE: NVML's "MIG 3g.40gb" → "3g.40gb". */
export function profileLabel(name: string | null): string {
  return name === null ? 'unknown' : name.replace(/^MIG\s+/, '');
}

function gpuLabels(gpu: GpuSummary, host: string): GpuLabels {
  return {
    gpu: String(gpu.index),
    UUID: gpu.uuid,
    pci_bus_id: gpu.pciBusId ?? '',
    device: `nvidia${gpu.index}`,
    modelName: gpu.name,
    Hostname: host,
    DCGM_FI_DRIVER_VERSION: gpu.driverVersion,
  };
}

/** An absent GPU holds no index: the GPU now in its slot owns `gpu` and `device`, so joins on them stay one-to-one. */
function absentGpuLabels(gpu: GpuSummary, host: string): GpuLabels {
  return { ...gpuLabels(gpu, host), gpu: '', device: '' };
}

/** The conditions of the served result (document.conditions), one gauge per quantity, in base units. */
type ConditionGauges = Record<
  'busy' | 'otherProcesses' | 'smClock' | 'smClockLimit' | 'clocksEventReason' | 'temperature' | 'power' | 'persistenceMode' | 'eccMode',
  Gauge<string>
>;

function conditionGauges(registers: Registry[]): ConditionGauges {
  const gauge = (name: string, help: string, extra: string[] = []): Gauge<string> =>
    new Gauge({ name, help, labelNames: [...GPU_LABELS, ...extra], registers });
  return {
    busy: gauge(
      'topod_probe_conditions_busy',
      '1 when the served result was measured while other processes used the GPU (evenIfBusy, TOPOD_PROBE_WHEN=always, or a process seen during the probe); 0 on an idle GPU',
    ),
    otherProcesses: gauge(
      'topod_probe_other_processes',
      "Processes other than topod's NVML saw on the GPU before or during the probe of the served result",
    ),
    smClock: gauge(
      'topod_probe_sm_clock_hertz',
      'Lowest and highest SM clock NVML read during the probe of the served result (bound: min, max)',
      ['bound'],
    ),
    smClockLimit: gauge('topod_probe_sm_clock_limit_hertz', "The SM clock's maximum as NVML reported it when the served result was probed"),
    clocksEventReason: gauge(
      'topod_probe_clocks_event_reason',
      'Always 1: a reason NVML gave for holding the clocks back during the probe of the served result (gpu-idle left out)',
      ['reason'],
    ),
    temperature: gauge(
      'topod_probe_temperature_celsius',
      'GPU temperature when the probe of the served result started and ended (at: start, end)',
      ['at'],
    ),
    power: gauge('topod_probe_power_watts', 'Board power when the probe of the served result started and ended (at: start, end)', ['at']),
    persistenceMode: gauge('topod_probe_persistence_mode', '1 when persistence mode was on while the served result was probed'),
    eccMode: gauge('topod_probe_ecc_mode', '1 when ECC was enabled (current mode) while the served result was probed'),
  };
}

type SetSeries = (gauge: Gauge<string>, series: Record<string, string>, value: number) => void;

/** The served result's conditions as series; nothing for a result whose conditions are unknown (no NVML), as for one stored before they were recorded. */
function conditionSeries(gauges: ConditionGauges, labels: GpuLabels, conditions: ProbeConditions, set: SetSeries): void {
  if (conditions.source !== 'nvml') return;
  set(gauges.busy, labels, measuredWhileBusy(conditions) ? 1 : 0);
  set(gauges.otherProcesses, labels, conditions.otherProcesses.length);
  if (conditions.smClockMHz) {
    set(gauges.smClock, { ...labels, bound: 'min' }, conditions.smClockMHz.min * 1e6);
    set(gauges.smClock, { ...labels, bound: 'max' }, conditions.smClockMHz.max * 1e6);
  }
  if (conditions.maxSmClockMHz !== null) set(gauges.smClockLimit, labels, conditions.maxSmClockMHz * 1e6);
  for (const reason of conditions.clocksEventReasons) set(gauges.clocksEventReason, { ...labels, reason }, 1);
  for (const at of ['start', 'end'] as const) {
    const temperature = conditions.temperatureC[at];
    if (temperature !== null) set(gauges.temperature, { ...labels, at }, temperature);
    const power = conditions.powerWatts[at];
    if (power !== null) set(gauges.power, { ...labels, at }, power);
  }
  if (conditions.persistenceMode !== null) set(gauges.persistenceMode, labels, conditions.persistenceMode ? 1 : 0);
  if (conditions.eccMode !== null) set(gauges.eccMode, labels, conditions.eccMode ? 1 : 0);
}

export interface TopodMetricsOptions {
  topology: TopologyApi;
  poller?: PollSource | null;
  now?: () => number;
  /**
   * The `Hostname` label: dcgm-exporter's is its NODE_NAME, else the host
   * name; default the host name (on Kubernetes the ServiceMonitor sets it to
   * the node's name, as dcgm-exporter's NODE_NAME is).
   */
  hostname?: string;
}

export class TopodMetrics {
  readonly registry = new Registry();
  private readonly topology: TopologyApi;
  private readonly now: () => number;
  private readonly hostname: string;
  private readonly unsubscribe: () => void;
  private readonly detachPoller: () => void;
  /** Per GPU: the document its series were written from, and those series. */
  private readonly written = new Map<string, { document: PreparedDocument | null; labelsKey: string; series: WrittenSeries[] }>();

  /** Element value families by name, made when a series first needs one and dropped when none is left. */
  private readonly elementValues = new Map<string, Gauge<(typeof ELEMENT_VALUE_LABELS)[number]>>();
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
  private readonly conditions: ConditionGauges;
  private readonly activeJobs: Gauge<'state'>;
  private readonly jobsFinished: Counter<'state'>;
  private readonly jobDuration: Histogram<'state'>;
  private readonly pollDuration: Histogram;
  private readonly pollFailures: Counter;
  readonly httpDuration: Histogram<'method' | 'route' | 'status_code'>;

  constructor(options: TopodMetricsOptions) {
    this.topology = options.topology;
    this.now = options.now ?? Date.now;
    this.hostname = options.hostname ?? osHostname();
    const registers = [this.registry];
    this.confidence = new Gauge({
      name: 'topod_element_confidence_ratio',
      help: 'How sure topod is of a measured attribute (0..1)',
      labelNames: ELEMENT_LABELS,
      registers,
    });
    this.latencyCycles = new Gauge({
      name: 'topod_element_latency_cycles',
      help: 'Load latency of a memory element in SM cycles (statistic: mean, p50, p95)',
      labelNames: [...ELEMENT_LABELS, 'statistic'],
      registers,
    });
    this.latencySeconds = new Gauge({
      name: 'topod_element_latency_seconds',
      help: 'Mean load latency at the measured SM clock',
      labelNames: ELEMENT_LABELS,
      registers,
    });
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
    this.resultAge = new Gauge({
      name: 'topod_result_age_seconds',
      help: 'Seconds since the served result was measured (probe finish)',
      labelNames: GPU_LABELS,
      registers,
    });
    this.stale = new Gauge({
      name: 'topod_result_stale',
      help: '1 when the served result is for another driver or probe version (a re-probe is queued)',
      labelNames: GPU_LABELS,
      registers,
    });
    this.migL2Share = new Gauge({
      name: 'topod_mig_l2_share_bytes',
      help: 'L2 a MIG GPU instance owns: L2 x its memory slices / the GPU memory slices',
      labelNames: MIG_LABELS,
      registers,
    });
    this.migReachable = new Gauge({
      name: 'topod_mig_l2_reachable_per_sm_bytes',
      help: 'L2 one SM of the instance can reach: min(share, measured L2 segment)',
      labelNames: MIG_LABELS,
      registers,
    });
    this.migSlices = new Gauge({
      name: 'topod_mig_memory_slices',
      help: 'Memory slices of a MIG GPU instance',
      labelNames: MIG_LABELS,
      registers,
    });
    this.migSms = new Gauge({ name: 'topod_mig_multiprocessors', help: 'SMs of a MIG GPU instance', labelNames: MIG_LABELS, registers });
    this.migMemory = new Gauge({
      name: 'topod_mig_memory_bytes',
      help: 'Device memory of a MIG GPU instance',
      labelNames: MIG_LABELS,
      registers,
    });
    this.profileL2Share = new Gauge({
      name: 'topod_mig_profile_l2_share_bytes',
      help: 'L2 share an instance of this GPU-instance profile would get',
      labelNames: [...GPU_LABELS, 'GPU_I_PROFILE'],
      registers,
    });
    this.conditions = conditionGauges(registers);
    this.activeJobs = new Gauge({
      name: 'topod_probe_jobs',
      help: 'Probe jobs queued, waiting for a GPU other processes use, or running now',
      labelNames: ['state'],
      registers,
    });
    this.jobsFinished = new Counter({
      name: 'topod_probe_jobs_finished_total',
      help: 'Probe jobs that ended, by end state',
      labelNames: ['state'],
      registers,
    });
    this.jobDuration = new Histogram({
      name: 'topod_probe_job_duration_seconds',
      help: 'Wall time of probe jobs from start to end, by end state',
      labelNames: ['state'],
      buckets: PROBE_DURATION_BUCKETS_SECONDS,
      registers,
    });
    this.pollDuration = new Histogram({
      name: 'topod_nvml_poll_duration_seconds',
      help: 'Duration of one NVML state read',
      buckets: POLL_DURATION_BUCKETS_SECONDS,
      registers,
    });
    this.pollFailures = new Counter({
      name: 'topod_nvml_poll_failures_total',
      help: 'NVML state reads that found NVML unavailable',
      registers,
    });
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
    const active = { queued: 0, waiting: 0, running: 0 };
    const seen = new Set<string>();
    for (const gpu of this.topology.listGpus()) {
      seen.add(gpu.uuid);
      if (!gpu.present) {
        // Gone (unplugged, swapped, its driver unloaded): one series says so, everything measured on it goes.
        this.present.set(absentGpuLabels(gpu, this.hostname), 0);
        this.forget(gpu.uuid);
        continue;
      }
      const labels = gpuLabels(gpu, this.hostname);
      this.gpuInfo.set(
        { ...labels, driver_version: gpu.driverVersion, probe_status: gpu.probe.status, simulated: String(gpu.simulated) },
        1,
      );
      this.present.set(labels, 1);
      this.stale.set(labels, gpu.probe.stale ? 1 : 0);
      if (gpu.probe.status === 'queued' || gpu.probe.status === 'waiting' || gpu.probe.status === 'running') active[gpu.probe.status] += 1;
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
    for (const [state, count] of Object.entries(active)) this.activeJobs.set({ state }, count);
    this.dropEmptyElementFamilies();
  }

  /** The value family of a unit (and whether a bound), registered on first use. */
  private elementGauge(unit: ValueUnit, bound: boolean): Gauge<string> {
    const name = elementMetricName(unit, bound);
    let gauge = this.elementValues.get(name);
    if (!gauge) {
      const spec = UNIT_METRICS[unit];
      const help = bound
        ? `A bound on a memory element's attribute, in ${spec.suffix} (bound: lower = at least, upper = at most; the value itself is not known): ${spec.help}`
        : `Measured or known value of a memory element's attribute, in ${spec.suffix}: ${spec.help}`;
      gauge = new Gauge({ name, help, labelNames: ELEMENT_VALUE_LABELS, registers: [this.registry] });
      this.elementValues.set(name, gauge);
    }
    return gauge as Gauge<string>;
  }

  /** A family whose last series went with a document leaves the exposition with it. */
  private dropEmptyElementFamilies(): void {
    const used = new Set<object>();
    for (const { series } of this.written.values()) for (const [gauge] of series) used.add(gauge);
    for (const [name, gauge] of this.elementValues) {
      if (used.has(gauge)) continue;
      this.registry.removeSingleMetric(name);
      this.elementValues.delete(name);
    }
  }

  /** Removes every document-derived series written for a GPU. */
  private forget(uuid: string): void {
    for (const [gauge, labels] of this.written.get(uuid)?.series ?? []) gauge.remove(labels);
    this.written.delete(uuid);
  }

  private documentSeries(labels: GpuLabels, document: GpuTopologyDocument, written: WrittenSeries[]): void {
    const set: SetSeries = (gauge, series, value) => {
      gauge.set(series, value);
      written.push([gauge, series]);
    };
    for (const [element, topology] of elementEntries(document)) {
      for (const [attribute, value] of measuredAttributes(topology)) {
        const spec = UNIT_METRICS[value.unit];
        if (!spec) continue;
        const series = { ...labels, element, attribute };
        const per: Record<string, string> = 'per' in value && typeof value.per === 'string' ? { per: value.per } : {};
        if (value.bound !== undefined) {
          // "At least 64 KiB" is not a size of 64 KiB: its own family, and no confidence that would read as the size's.
          set(this.elementGauge(value.unit, true), { ...series, ...per, bound: value.bound }, value.value * spec.scale);
          continue;
        }
        set(this.elementGauge(value.unit, false), { ...series, ...per }, value.value * spec.scale);
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
    if (document.conditions) conditionSeries(this.conditions, labels, document.conditions, set);
    const mig = document.mig;
    if (!mig) return;
    for (const profile of mig.profiles) {
      if (profile.l2.bytes !== null)
        set(this.profileL2Share as Gauge<string>, { ...labels, GPU_I_PROFILE: profileLabel(profile.name) }, profile.l2.bytes);
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
    if (Number.isFinite(started) && Number.isFinite(finished))
      this.jobDuration.observe({ state }, Math.max(0, (finished - started) / 1000));
  }

  close(): void {
    this.unsubscribe();
    this.detachPoller();
    this.registry.clear();
  }
}
