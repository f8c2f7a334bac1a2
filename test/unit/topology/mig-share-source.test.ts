/**
 * The MIG L2 share says the same `source` wherever it appears: the parent
 * document's MIG view and the MIG device's instance view (which used to say
 * "derived" while the parent said "nvml" for the same number).
 */
import { describe, expect, it } from 'vitest';
import { mergeMigInstance } from '../../../server/topology/merge.js';
import { mergedGpu, recordedH100Result } from '../../helpers/face-documents.js';
import { deviceState, firstDevice } from '../dynamic/scenario-device.js';
import { mergeTopology } from '../../../server/topology/merge.js';

describe('MIG L2 share source', () => {
  it.each([
    ['placements readable (nvml)', {}],
    ['instance placements unreadable (derived from memory)', { hideInstancePlacements: true }],
  ])('%s: the instance view says what the parent says', (_name, options) => {
    const base = mergedGpu(recordedH100Result(), 'h100-80gb-mig-mixed.json');
    const device = { ...deviceState(firstDevice('h100-80gb-mig-mixed.json'), options), uuid: base.merged.gpu.uuid };
    const parent = mergeTopology(
      recordedH100Result(),
      { summary: base.summary, jobUrl: null },
      { available: true, reason: null, driverVersion: '580.95.05', device },
    );
    for (const instance of parent.mig!.instances) {
      const view = mergeMigInstance(parent, instance.migDeviceUuid!)!;
      expect(view.elements.l2!.size).toEqual({ value: instance.l2.bytes, unit: 'bytes', source: instance.l2.source });
      expect(view.instance.l2.source).toBe(instance.l2.source);
    }
    expect(new Set(parent.mig!.instances.map((i) => i.l2.source))).toEqual(
      new Set([Object.keys(options).length === 0 ? 'nvml' : 'derived']),
    );
  });
});
