/** Whether every run measured the same map (null: the run has none), as one line under `label`. */
export function sameInEveryRun(label: string, maps: ReadonlyArray<unknown>): string {
  if (maps.some((map) => map === null || map === undefined)) return `${label}: missing in some run`;
  const distinct = new Set(maps.map((map) => JSON.stringify(map))).size;
  return distinct === 1
    ? `${label}: the same in all ${maps.length} runs`
    : `${label}: DIFFERS across runs (${distinct} distinct maps in ${maps.length} runs)`;
}
