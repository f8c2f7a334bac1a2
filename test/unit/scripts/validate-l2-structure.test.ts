import { describe, expect, it } from 'vitest';
import { renderL2Structure, samePartitionMap } from '../../../scripts/validate/l2-structure.js';
import type { ElementTopology } from '../../../server/model/document.js';
import { simulatedH100Result } from '../../helpers/face-documents.js';

describe('validate:gpu L2-structure lines', () => {
  it('prints the simulated H100’s partitions, group sizes, latencies and amount, and checks the map across runs', async () => {
    const l2 = (await simulatedH100Result()).elements.l2!;
    const partitions = l2.partitions!;
    const lines = renderL2Structure(l2);
    expect(lines[0]).toContain(
      `L2 partitions: ${partitions.count} (SMs per group ${partitions.smGroups.map((g) => g.length).join(' + ')};`,
    );
    expect(lines[0]).toContain(`nearLatency ${partitions.nearLatency.p50.toFixed(0)}`);
    expect(lines.some((line) => line.startsWith('L2 amount: '))).toBe(true);
    const window = partitions.persistingWindow!;
    expect(lines).toContain(
      `L2 persisting window of ${window.windowBytes} B: hit rate ${window.hitRateWithout} without → ${window.hitRateWith} with`,
    );
    expect(lines).toContain(`L2 sharedDataCapacityBytes: ${partitions.sharedDataCapacityBytes}`);
    expect(samePartitionMap([l2, l2])).toBe('SM → L2 partition map: the same in all 2 runs');
    const moved: ElementTopology = { ...l2, partitions: { ...partitions, smGroups: [...partitions.smGroups].reverse() } };
    expect(samePartitionMap([l2, moved])).toBe('SM → L2 partition map: DIFFERS across runs (2 distinct maps in 2 runs)');
  }, 120_000); // a whole simulated discovery

  it('says when the partitions were not measured', () => {
    expect(renderL2Structure({})).toEqual(['L2 partitions: not measured']);
    expect(renderL2Structure(undefined)).toEqual(['L2 partitions: not measured']);
    expect(samePartitionMap([{}, undefined])).toBe('SM → L2 partition map: missing in some run');
  });
});
