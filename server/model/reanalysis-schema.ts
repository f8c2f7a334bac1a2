/** Schema of a re-analysis answer (POST /v1/gpus/{id}/reanalyse). */
import { Type } from '@sinclair/typebox';

const ResultRefSchema = Type.Object({
  resultId: Type.Integer({ minimum: 1 }),
  analysisVersion: Type.String(),
});

export const ReanalysisSchema = Type.Object(
  {
    gpuUuid: Type.String(),
    resultId: Type.Integer({ minimum: 1, description: 'the new result, now served' }),
    analysisVersion: Type.String({ description: 'the analysis that built it (the current one)' }),
    reanalysedFrom: ResultRefSchema,
    topologyUrl: Type.String({ description: 'where the rebuilt document is served' }),
  },
  { $id: 'Reanalysis', description: "a result rebuilt by the current analysis from a stored result's raw series" },
);
