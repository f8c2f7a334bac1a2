/** Schemas of the probe-job resource; ProbeJob is the Static<> type of ProbeJobSchema. */
import { Type, type Static } from '@sinclair/typebox';
import { MAX_PARAM_LENGTH, NullableString, NullableTimestamp, TimestampSchema, sharedRef } from './api-schema.js';
import { ProbeTargetSchema } from './gpu-schema.js';
import { StringEnum } from './schema-helpers.js';

export const JOB_STATES = ['queued', 'waiting', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type JobState = (typeof JOB_STATES)[number];

export const JobStateSchema = StringEnum(JOB_STATES);

export const ProbeJobSchema = Type.Object(
  {
    id: Type.String(),
    gpuUuid: Type.String(),
    state: JobStateSchema,
    phase: NullableString({ description: 'the benchmark step running now' }),
    progress: Type.Number({ minimum: 0, maximum: 1 }),
    error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()]),
    reason: Type.String({ description: 'why it was queued: first-probe, driver-changed, requested, …' }),
    requestedBy: Type.String({ description: 'boot, nvml-change (NVML reported a GPU added or changed), api:<client address>' }),
    only: Type.Union([Type.Array(ProbeTargetSchema), Type.Null()]),
    force: Type.Boolean({ description: "cancelled the GPU's active job when it was requested" }),
    evenIfBusy: Type.Boolean({ description: 'measured even while other processes use the GPU; the result says so' }),
    waitingSince: NullableTimestamp('when the job first found its GPU busy (state waiting; phase says why)'),
    resultId: Type.Union([Type.Integer(), Type.Null()]),
    createdAt: TimestampSchema,
    startedAt: NullableTimestamp('when a worker picked it up'),
    finishedAt: NullableTimestamp('when it ended'),
  },
  { $id: 'ProbeJob' },
);

export type ProbeJob = Static<typeof ProbeJobSchema>;

export const JobListSchema = Type.Object({
  jobs: Type.Array(sharedRef(ProbeJobSchema), { description: 'newest first (creation time, then id)' }),
  next: NullableString({
    description: 'the next page: this query with its cursor (also the Link rel="next" header); null on the last page',
  }),
});

export const JobParamsSchema = Type.Object({ jobId: Type.String({ minLength: 1, maxLength: MAX_PARAM_LENGTH }) });

export const DEFAULT_JOB_LIMIT = 50;
export const MAX_JOB_LIMIT = 500;

/** A page cursor (server/api/job-cursor.ts) is a base64url string no longer than this. */
export const MAX_CURSOR_LENGTH = 512;
export const CURSOR_PATTERN = '^[A-Za-z0-9_-]+$';

export const JobQuerySchema = Type.Object({
  gpu: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_PARAM_LENGTH, description: 'GPU index, GPU UUID or MIG device UUID' })),
  state: Type.Optional(JobStateSchema),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_JOB_LIMIT, default: DEFAULT_JOB_LIMIT })),
  cursor: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: MAX_CURSOR_LENGTH,
      pattern: CURSOR_PATTERN,
      description: 'opaque: where the previous page ended, as its `next` gives it; pages past the limit of 500',
    }),
  ),
});
