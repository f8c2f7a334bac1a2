/**
 * The conditions a result was measured under (issue 17: trust on a shared
 * node): who else used the GPU, its clocks and why they were held back,
 * temperature and power, as NVML reported them before and during the probe.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Count, Nullable, StringEnum } from './schema-helpers.js';

const Range = (unit: string, description: string) =>
  Nullable(Type.Object({ min: Type.Number(), max: Type.Number() }, { additionalProperties: false }), {
    description: `${description} (${unit}); null when NVML gave none`,
  });
const StartEnd = (unit: string, description: string) =>
  Type.Object(
    { start: Nullable(Type.Number()), end: Nullable(Type.Number()) },
    { additionalProperties: false, description: `${description} (${unit}) when the probe started and ended` },
  );

export const SeenProcessSchema = Type.Object(
  {
    pid: Count('as NVML reports it (a host PID when topod runs in a container)'),
    kind: StringEnum(['compute', 'graphics'] as const),
    usedMemoryBytes: Nullable(Count()),
    migDeviceUuid: Nullable(Type.String()),
  },
  { additionalProperties: false },
);

export const ProbeConditionsSchema = Type.Object(
  {
    source: StringEnum(['nvml', 'none'] as const, {
      description: 'nvml: read before and during the probe; none: NVML was not there (see note)',
    }),
    note: Nullable(Type.String({ description: 'why conditions are unknown, when they are' })),
    busyAtStart: Type.Boolean({ description: 'other processes used the GPU when the probe started' }),
    probedWhileBusy: Type.Boolean({
      description: 'an admin asked to measure even on a busy GPU (evenIfBusy), and it was busy: treat the values with care',
    }),
    busyReason: Nullable(
      Type.String({ description: 'what was seen when the probe started, e.g. "gpu-busy: 1 compute process (2.0 GiB), 100 % utilization"' }),
    ),
    otherProcesses: Type.Array(SeenProcessSchema, {
      description: "processes other than topod's seen on the GPU before or during the probe",
    }),
    smClockMHz: Range('MHz', 'the SM clock NVML read during the probe'),
    maxSmClockMHz: Nullable(Type.Number({ description: "the SM clock's maximum (MHz)" })),
    clocksEventReasons: Type.Array(Type.String(), {
      description: 'every reason NVML gave for holding the clocks back during the probe (e.g. sw-thermal-slowdown); [] when none',
    }),
    temperatureC: StartEnd('°C', 'GPU temperature'),
    powerWatts: StartEnd('W', 'board power'),
    persistenceMode: Nullable(Type.Boolean()),
    eccMode: Nullable(Type.Boolean({ description: 'ECC enabled (current mode)' })),
    samples: Count('how many NVML reads the record is built from'),
  },
  {
    $id: 'ProbeConditions',
    additionalProperties: false,
    description: 'the conditions the GPU was measured under; absent in results stored before topod recorded them',
  },
);

export type ProbeConditions = Static<typeof ProbeConditionsSchema>;
export type SeenProcess = Static<typeof SeenProcessSchema>;
