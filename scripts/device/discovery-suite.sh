#!/usr/bin/env bash
# The discovery issues' GPU checks (8, 9, 10), from this checkout on a GPU host (after pack.sh here,
# carried as .device/): the SASS proof that every stop clock waits for its
# load, the probe smoke (every op, the consumer self-test, cold walks), the
# per-phase probe benchmark (full, and l1 only), and three consecutive validate:gpu runs through
# the daemon with their raw series. References are read from
# .device/REFERENCE.md when it was put there (never committed).
# Writes everything under $OUT (default /tmp/topod-discovery-out).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/topod-discovery-out}
mkdir -p "$OUT"
bash scripts/device/unpack.sh > "$OUT/unpack.log" 2>&1
export PATH=/tmp/nodebin:$PATH:/usr/local/cuda/bin
summary="$OUT/summary.txt"
{
  echo "date: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,uuid,driver_version,mig.mode.current,clocks.sm,clocks.max.sm --format=csv
} > "$summary" 2>&1

step() { # name command...: runs, times, records the exit status in the summary
  local name=$1; shift
  local t0; t0=$(date +%s%N)
  "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc in $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> "$summary"
}

step sass bash scripts/device/sass-check.sh
step smoke bash native/probe/scripts/smoke.sh native/probe/build/topod-probe "$OUT/smoke"
step bench-probe node --import tsx bench/probe.ts --backend native
step bench-probe-l1 node --import tsx bench/probe.ts --backend native --only l1
ref=()
[ -f .device/REFERENCE.md ] && ref=(--reference .device/REFERENCE.md)
step validate node --import tsx scripts/validate-gpu.ts --runs "${VALIDATE_RUNS:-3}" "${ref[@]}" --json "$OUT/validate.json" --raw "$OUT/validate-raw.json"
tail -25 "$OUT/bench-probe.log" >> "$summary"
tail -12 "$OUT/bench-probe-l1.log" >> "$summary"
grep -E "^## run|DIFFERS|warning" "$OUT/validate.log" >> "$summary"
(cd "$OUT" && tar -czf smoke.tgz smoke && rm -rf smoke)
cat "$summary"
