/**
 * The probe protocol's limits: the one table. The rules (./validate.ts, the
 * list at its top) read them from here, and so does the native probe:
 * native/probe/src/limits.generated.h is generated from this module by
 * `npm run generate:limits` (scripts/generate-limits.ts). Every exported
 * number becomes a `constexpr uint64_t` there, SCREAMING_CASE turned into
 * kPascalCase (MAX_ARRAY_BYTES → kMaxArrayBytes); a unit test fails while
 * the committed header differs from what this table generates.
 *
 * Only non-negative safe integers belong here (the header's type is uint64_t).
 */

export const MAX_ARRAY_BYTES = 2 ** 52;
/** Every timed load's latency is buffered in shared memory (SAMPLE_SHARED_BYTES each). */
export const MAX_SAMPLES = 8192;
export const MAX_CALIBRATE_SAMPLES = 1_000_000;
export const MAX_SEED = 0xffff_ffff;
export const MAX_BANDWIDTH_BLOCKS = 2 ** 20;
export const MAX_REPETITIONS = 1000;
/** bandwidth: passes over the array inside one launch, and the bytes one launch may stream (arrayBytes × passes). */
export const MAX_BANDWIDTH_PASSES = 4096;
export const MAX_BANDWIDTH_LAUNCH_BYTES = 2 ** 40;
/** The probe's constant table: one 64 KiB constant bank (native/probe/src/chase-types.h kConstantChainElems 32-bit elements). */
export const CONSTANT_TABLE_BYTES = 64 * 1024;
/** A chaser's shared memory beside a shared-space chain: a latency word per timed sample and one sink word. */
export const SAMPLE_SHARED_BYTES = 4;
export const SINK_SHARED_BYTES = 4;
/** What the runtime may still need beside a request's buffers (rule 4). */
export const RUNTIME_MARGIN_BYTES = 64 * 1024 ** 2;
/** Element indices are 32-bit. */
export const MAX_CHAIN_BYTES = 2 ** 34 - 4;
export const MAX_TEXTURE_ELEMENTS = 2 ** 27;
/** compute.smid and the cluster.* ops. */
export const MAX_CLUSTER_SIZE = 16;
export const MAX_SMID_CLUSTERS = 65536;
export const MAX_SMID_REPETITIONS = 64;
export const MAX_TRANSFER_BYTES = 2 ** 20;
export const MAX_LAUNCH_BLOCKS = 2 ** 20;
export const MAX_SPIN_NS = 1_000_000;
export const MAX_LAUNCH_REPETITIONS = 100;
/** cluster.dsmem's shared memory beside its transfer buffer: a 4 KiB latency ring and an 8-byte sink. */
export const DSMEM_FIXED_SHARED_BYTES = 4096 + 8;
/**
 * l2.partition: the default array and stride (2048 chunks of the L2's 256 B
 * homing unit), and the largest stride. One latency per chunk is buffered in
 * shared memory, so chunks are bounded by MAX_SAMPLES.
 */
export const DEFAULT_PARTITION_ARRAY_BYTES = 512 * 1024;
export const DEFAULT_PARTITION_STRIDE_BYTES = 256;
export const MAX_PARTITION_STRIDE_BYTES = 2 ** 20;
/**
 * l2.farnear: every pass touches each 128 B line, so arrays and strides are
 * whole lines; at most MAX_SAMPLES chunks (one latency each buffered in shared
 * memory); 1 or 2 chosen SMs; passes in [2, 16].
 */
export const FARNEAR_LINE_BYTES = 128;
export const DEFAULT_FARNEAR_STRIDE_BYTES = 256;
export const MAX_FARNEAR_SMS = 2;
export const DEFAULT_FARNEAR_PASSES = 2;
export const MAX_FARNEAR_PASSES = 16;
/** l2.persist: whole 128 B lines too. */
export const PERSIST_LINE_BYTES = 128;
/**
 * traffic: cases and counter metrics per request (a metric name is
 * [a-z0-9_.], at most MAX_TRAFFIC_METRIC_CHARS characters), the default timed
 * repetitions, and the L2 flush buffer around every case (a multiple of the
 * L2's size).
 */
export const MAX_TRAFFIC_CASES = 256;
export const MAX_TRAFFIC_METRICS = 16;
export const MAX_TRAFFIC_METRIC_CHARS = 128;
export const DEFAULT_TRAFFIC_REPETITIONS = 3;
export const TRAFFIC_FLUSH_L2_MULTIPLE = 4;
