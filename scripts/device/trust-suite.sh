#!/usr/bin/env bash
# Issue 17's GPU checks, from this checkout on a GPU host (after pack.sh here,
# carried as .device/, with .device/tenant built by nvcc from
# scripts/device/tenant/tenant.cu): the daemon's first probe on an idle GPU, on
# a GPU a tenant uses (it waits, then probes once the tenant is gone), probed
# anyway with TOPOD_PROBE_WHEN=always, and with a tenant that starts mid-probe;
# answer latencies during each probe; bench:probe's analysis phase. Every
# tenant exits on its own (--seconds) and is killed on exit regardless.
# Writes everything under $OUT (default /tmp/topod-trust-out).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/topod-trust-out}
mkdir -p "$OUT"
bash scripts/device/unpack.sh > "$OUT/unpack.log" 2>&1
export PATH=/tmp/nodebin:$PATH:/usr/local/cuda/bin
TENANT=.device/tenant
summary="$OUT/summary.txt"
tenants=()
daemon=
cleanup() {
  for pid in "${tenants[@]}"; do kill "$pid" 2>/dev/null; done
  [ -n "$daemon" ] && kill "$daemon" 2>/dev/null
  wait 2>/dev/null
}
trap cleanup EXIT
{
  echo "date: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,uuid,driver_version,mig.mode.current,clocks.sm,clocks.max.sm --format=csv
} > "$summary" 2>&1

start_daemon() { # name env...: a fresh database, the native backend, built code as npm start runs it (CPU-profiled with PROFILE=1)
  local name=$1; shift
  rm -f /tmp/topod-trust.sqlite*
  local prof=()
  [ "${PROFILE:-0}" = 1 ] && prof=(--cpu-prof --cpu-prof-dir="$OUT/prof-$name")
  env TOPOD_BACKEND=native TOPOD_DB=/tmp/topod-trust.sqlite TOPOD_PORT=18080 "$@" node "${prof[@]}" --max-semi-space-size=4 dist/server/main.js > "$OUT/$name-daemon.log" 2>&1 &
  daemon=$!
}
stop_daemon() { kill -TERM "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null; daemon=; }
watch() { # name until timeout
  node scripts/device/daemon-watch.mjs --until "$2" --timeout-s "$3" --out "$OUT/$1.json" > "$OUT/$1-watch.log" 2>&1
  echo "== $1 (until $2): exit $?" >> "$summary"; cat "$OUT/$1-watch.log" >> "$summary"
}
tenant() { # args...: starts a tenant in the background
  "$TENANT" "$@" >> "$OUT/tenant.log" 2>&1 &
  tenants+=($!)
}

# 1. Idle: the baseline document, and answer latencies during the probe.
start_daemon idle; watch idle succeeded,failed 120; stop_daemon

# 2. A tenant streams over 2 GiB on every SM: the first probe waits; the tenant ends (40 s); the probe runs.
tenant --mode stream --seconds 40
sleep 3
nvidia-smi --query-compute-apps=pid,used_memory --format=csv >> "$summary" 2>&1
start_daemon busy-wait; watch busy-wait succeeded,failed 150; stop_daemon

# 3. Probed anyway on a busy GPU (TOPOD_PROBE_WHEN=always): every value that differs from idle must read < 0.9.
tenant --mode stream --seconds 30
sleep 3
start_daemon busy-always TOPOD_PROBE_WHEN=always; watch busy-always succeeded,failed 120; stop_daemon
wait "${tenants[-1]}" 2>/dev/null

# 4. A tenant that starts 1.5 s after the daemon, about a second into the probe (a full probe takes ~3 s), and runs
#    15 s: caught, nothing interfered served, measured again once it is gone.
start_daemon mid
tenant --mode stream --seconds 15 --delay-seconds 1.5
watch mid succeeded,failed 150; stop_daemon
wait "${tenants[-1]}" 2>/dev/null

# 5. A compute-only tenant (time slicing, little memory traffic) is seen too.
tenant --mode compute --seconds 20
sleep 3
start_daemon compute-wait TOPOD_PROBE_MAX_WAIT_MS=8000; watch compute-wait failed,succeeded 60; stop_daemon

# 6. The analysis phase: bench:probe on the idle GPU.
wait 2>/dev/null
node --import tsx bench/probe.ts --backend native > "$OUT/bench-probe.log" 2>&1
tail -20 "$OUT/bench-probe.log" >> "$summary"
cat "$summary"
