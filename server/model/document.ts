/**
 * The shapes of what clients get (DESIGN.md: the document). Every value says
 * where it came from and how sure we are. The document's types are the
 * Static<> types of its schemas (./document-schema.ts and the parts it
 * composes), which /openapi.json serves as GpuTopologyDocument and
 * MigInstanceTopologyDocument.
 */
import type { ComputeTopology } from './compute-schema.js';
import type { ClockCalibration } from './device-schema.js';
import type { Carveout, ElementName, ElementTopology, ResultDocument } from './document-schema.js';
import type { TrafficTopology } from './traffic-schema.js';

export { DOCUMENT_SCHEMA_VERSION, ELEMENT_NAMES, PROBE_FAMILIES, PROBE_TARGETS } from './document-schema.js';
export type {
  Carveout,
  ElementName,
  ElementTopology,
  GpuTopologyDocument,
  L2Partitions,
  MigInstanceTopologyDocument,
  ProbeRun,
  ProbeTarget,
  ResultDocument,
  TopologyElements,
  TopologyStatus,
} from './document-schema.js';
export type { AmountValue, LatencyValue, MeasuredValue, ValueSource, ValueUnit } from './value-schema.js';
export type { ClockCalibration, DeviceProperties, DocumentDeviceProperties, DynamicState } from './device-schema.js';
export type {
  MigComputeInstanceView,
  MigInstanceView,
  MigL2Share,
  MigL2Source,
  MigModeName,
  MigProfileView,
  MigView,
} from './mig-schema.js';

/** One raw measurement series kept beside a result, so a better analysis can re-read it. */
export interface RawSeries {
  /** Which benchmark step produced it, e.g. "l1.size.sweep". */
  name: string;
  op: string;
  args: unknown;
  result: unknown;
}

/** What discovery returns for one GPU. */
export interface DiscoveryOutcome {
  elements: Partial<Record<ElementName, ElementTopology>>;
  /** SM clock and clock-read overhead used to convert cycles. */
  clock?: ClockCalibration;
  /** The L1/shared split the per-SM cache benchmarks ran under, when their series record it. */
  carveout?: Carveout;
  /** SMs, GPCs and thread block clusters, when the compute strategy ran. */
  compute?: ComputeTopology;
  /** L2 ↔ device-memory traffic, when the traffic strategy ran (opt-in). */
  traffic?: TrafficTopology;
  /** Device properties as the runtime reported them (source "api"); `{}` when no hello series was recorded. */
  device: ResultDocument['device'];
  raw: RawSeries[];
  warnings: string[];
}
