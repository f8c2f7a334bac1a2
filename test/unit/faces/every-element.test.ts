/**
 * The faces read the document generically: a simulated H100 discovery with
 * every element (texture, read-only, constant L1/L1.5, shared, granularities,
 * bounds, carveout, compute) comes out in the picture and the MT4G export
 * without the faces knowing the list.
 */
import { describe, expect, it } from 'vitest';
import { elementLabel } from '../../../server/faces/documents.js';
import { mt4gResult } from '../../../server/faces/mt4g-export.js';
import { elementSummary, topologySvg } from '../../../server/faces/svg.js';
import { mergedGpu, simulatedH100Result } from '../../helpers/face-documents.js';
import { WHOLE_DISCOVERY_TIMEOUT_MS } from '../../helpers/simulated-discovery.js';

describe('faces of a document with every element (simulated H100)', () => {
  it(
    'the picture draws every element, with the L1.5 as a bound',
    async () => {
      for (const scenario of ['h100-80gb-mig-mixed.json', null]) {
        const { merged } = mergedGpu(await simulatedH100Result(), scenario);
        const svg = topologySvg(merged);
        expect(svg.startsWith('<svg')).toBe(true);
        for (const name of Object.keys(merged.elements)) expect(svg).toContain(elementLabel(name));
        expect(elementSummary(merged.elements.constantL15!)).toContain('≥');
      }
    },
    WHOLE_DISCOVERY_TIMEOUT_MS,
  );

  it(
    'the MT4G export writes the per-SM caches MT4G has sections for, and keeps the bound as MT4G’s sentinel',
    async () => {
      const { merged } = mergedGpu(await simulatedH100Result(), 'h100-80gb-mig-mixed.json');
      const exported = mt4gResult(merged) as Record<string, any>;
      expect(Object.keys(exported['memory']).sort()).toEqual(['constant', 'l1', 'l2', 'main', 'readOnly', 'shared', 'texture']);
      expect(Object.keys(exported['memory'].constant).sort()).toEqual(['l1', 'l1.5', 'totalConstMem']);
      expect(exported['memory'].constant.l1.size.size).toBe(merged.elements.constantL1!.size!.value);
      // MT4G writes "more than the constant bank" as one byte past it.
      expect(exported['memory'].constant['l1.5'].size.size).toBeGreaterThan(merged.elements.constantL15!.size!.value);
    },
    WHOLE_DISCOVERY_TIMEOUT_MS,
  );
});
