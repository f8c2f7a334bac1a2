/** GET /v1/gpus/{id}/traffic?strideBytes=&elementBytes=&footprintBytes=&pattern=&target= — predicted L2 ↔ device-memory bytes (issue 20). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  curveCorrections,
  lineSizeParameters,
  parametersFromDocument,
  predictTraffic,
  predictWithCurve,
  type TrafficQuery,
} from '../discovery/traffic-predict.js';
import { NotFoundError, TopologyPendingError, TopologyUnavailableError, ValidationError } from '../errors.js';
import { LinkHeaderSchema, jsonResponse, problemResponse, RetryAfterHeaderSchema } from '../model/api-schema.js';
import type { GpuTopologyDocument } from '../model/document.js';
import { GpuParamsSchema } from '../model/gpu-schema.js';
import {
  TrafficPredictionSchema,
  TrafficQuerySchema,
  type TrafficPrediction,
  type TrafficQueryString,
} from '../model/traffic-prediction-schema.js';
import type { TrafficValue } from '../model/traffic-schema.js';
import { servedGpuDocument } from './face-lookup.js';

const used = (v: TrafficValue) => ({ value: v.value, source: v.source, method: v.method });
const usedFlag = (f: { value: boolean; method: 'counters' | 'timing' } | null, fallback: boolean) =>
  f
    ? { value: f.value, source: 'microbenchmark' as const, method: f.method }
    : { value: fallback, source: 'assumed' as const, method: null };

/** The prediction for `query` from a document's traffic section; 404 when the traffic was never measured. */
export function trafficPrediction(document: GpuTopologyDocument, query: TrafficQueryString): TrafficPrediction {
  const traffic = document.traffic;
  const parameters = traffic ? parametersFromDocument(traffic) : null;
  if (!traffic || !parameters) {
    throw new NotFoundError(
      `GPU "${document.gpu.uuid}" has no measured traffic${traffic ? ' (too few points for the predictor)' : ''}: it is opt-in, POST /v1/gpus/${document.gpu.uuid}/probe with {"only":["traffic"]}`,
    );
  }
  const elementBytes = query.elementBytes ?? 4;
  if (query.strideBytes < elementBytes)
    throw new ValidationError(`querystring/strideBytes must be at least elementBytes (${elementBytes})`);
  const q: TrafficQuery = {
    pattern: query.pattern ?? 'read',
    target: query.target ?? 'written',
    strideBytes: query.strideBytes,
    elementBytes,
    footprintBytes: query.footprintBytes,
  };
  const corrections = curveCorrections(parameters, traffic.curve);
  const predicted = predictWithCurve(parameters, corrections, q);
  const model = predictTraffic(parameters, q);
  const storeFill = traffic.storeFillBytes ?? traffic.readTransactionBytes!;
  return {
    gpuUuid: document.gpu.uuid,
    query: { pattern: q.pattern, target: q.target, strideBytes: q.strideBytes, elementBytes, footprintBytes: q.footprintBytes },
    accesses: predicted.accesses,
    usefulBytes: predicted.usefulBytes,
    dramReadBytes: Math.round(predicted.readBytes),
    dramWriteBytes: Math.round(predicted.writeBytes),
    bytesPerUsefulByte: Math.round(predicted.bytesPerUsefulByte * 1000) / 1000,
    modelBytesPerUsefulByte: Math.round(model.bytesPerUsefulByte * 1000) / 1000,
    lineModelBytesPerUsefulByte: Math.round(predictTraffic(lineSizeParameters(parameters), q).bytesPerUsefulByte * 1000) / 1000,
    used: {
      readTransactionBytes: used(traffic.readTransactionBytes!),
      writeTransactionBytes: used(traffic.writeTransactionBytes!),
      readFillBytes: used(traffic.readFillBytes!),
      storeFillBytes: used(storeFill),
      storesAllocate: { fresh: usedFlag(traffic.storesAllocate.fresh, true), written: usedFlag(traffic.storesAllocate.written, true) },
      fullSectorStoresRead: usedFlag(traffic.fullSectorStoresRead, false),
      curveFactor: corrections.some((c) => c.pattern === q.pattern)
        ? { value: Math.round(predicted.curveFactor * 1000) / 1000, source: 'microbenchmark', method: traffic.method }
        : { value: 1, source: 'none', method: null },
    },
    measuredAt: document.probe.startedAt,
    note: 'one pass over the array, from a flushed L2: reads min(span, accesses × readFillBytes), writes min(span, accesses × writeTransactionBytes), plus the fill of allocating stores; × the measured curve’s factor at this stride',
  };
}

const trafficRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/gpus/:id/traffic',
    {
      schema: {
        tags: ['topology'],
        operationId: 'getTrafficPrediction',
        summary: 'Predicted device-memory bytes per useful byte for a strided access pattern',
        description:
          'From the GPU’s measured L2 ↔ device-memory traffic (transaction sizes, read fill, allocating stores; opt-in: a probe with only ["traffic"]): the bytes one pass of the pattern moves, and the same by the line-size model. A MIG device UUID answers for its parent GPU.',
        params: GpuParamsSchema,
        querystring: TrafficQuerySchema,
        response: {
          200: jsonResponse('the prediction, with the numbers it used', TrafficPredictionSchema),
          400: problemResponse('a parameter missing, not an integer, out of range, or strideBytes below elementBytes'),
          404: problemResponse('no such GPU, or its traffic was never measured'),
          503: {
            ...problemResponse(
              `not measured yet (code ${TopologyPendingError.code}, with jobUrl) or cannot be (${TopologyUnavailableError.code})`,
            ),
            headers: { 'retry-after': RetryAfterHeaderSchema, link: LinkHeaderSchema },
          },
        },
      },
    },
    async (request) => trafficPrediction(servedGpuDocument(app, request.params.id).document, request.query),
  );
};

export default trafficRoutes;
