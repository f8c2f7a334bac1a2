/** Schemas of the liveness and readiness probes. */
import { Type } from '@sinclair/typebox';

export const LivenessSchema = Type.Object({ status: Type.Literal('ok'), version: Type.String() });

export const HealthCheckSchema = Type.Object({ ok: Type.Boolean(), detail: Type.String() });

export const ReadinessSchema = Type.Object({
  status: Type.Literal('ready'),
  checks: Type.Record(Type.String(), HealthCheckSchema),
});
