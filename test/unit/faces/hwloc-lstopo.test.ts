/** The host's hwloc XML is read once for a while, by one lstopo run however many ask at once; a missing lstopo is looked for again. */
import { describe, expect, it } from 'vitest';
import { HostHwlocXml, type HostXml } from '../../../server/faces/hwloc-lstopo.js';

function counted(answers: HostXml[]): { read: () => Promise<HostXml>; runs: () => number } {
  let runs = 0;
  return {
    read: async () => answers[Math.min(runs++, answers.length - 1)]!,
    runs: () => runs,
  };
}

describe('HostHwlocXml', () => {
  it('shares one run between concurrent askers and keeps the XML for keepMs', async () => {
    let nowMs = 0;
    const lstopo = counted([{ kind: 'xml', xml: '<topology/>' }]);
    const host = new HostHwlocXml(lstopo.read, 1000, () => nowMs);
    const answers = await Promise.all([host.get(), host.get(), host.get()]);
    expect(answers.every((a) => a.kind === 'xml')).toBe(true);
    expect(lstopo.runs()).toBe(1);
    nowMs = 999;
    await host.get();
    expect(lstopo.runs()).toBe(1);
    nowMs = 1000;
    await host.get();
    expect(lstopo.runs()).toBe(2);
  });

  it('looks for lstopo again on the next ask when it was missing or failed', async () => {
    const lstopo = counted([
      { kind: 'missing', reason: 'lstopo is not installed' },
      { kind: 'failed', reason: 'lstopo --of xml failed' },
      { kind: 'xml', xml: '<topology/>' },
    ]);
    const host = new HostHwlocXml(lstopo.read, 60_000, () => 0);
    expect((await host.get()).kind).toBe('missing');
    expect((await host.get()).kind).toBe('failed');
    expect((await host.get()).kind).toBe('xml');
    expect(lstopo.runs()).toBe(3);
  });
});
