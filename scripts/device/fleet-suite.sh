#!/usr/bin/env bash
# Issue 13's run on a host with two (or more) GPUs, from this checkout after
# `bash scripts/device/pack.sh` here (carried as .device/): the daemon on the
# native backend probing every GPU one at a time (TOPOD_PROBE_CONCURRENCY=1:
# each GPU's own probe time) and then in parallel (=2, fresh database: the
# wall time to compare), each time recording the GPUs' real UUIDs, the jobs'
# times, GET /v1/node (agreement and links), /metrics, every topology
# document, the NFD feature file, and GPU 0's raw series (parallel run).
# Only reads NVML and runs the probe; never changes a device setting.
# Writes everything under $OUT (default /tmp/topod-fleet-out); summary.txt last.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${OUT:-/tmp/topod-fleet-out}
mkdir -p "$OUT"
bash scripts/device/unpack.sh > "$OUT/unpack.log" 2>&1
export PATH=/tmp/nodebin:$PATH:/usr/local/cuda/bin
summary="$OUT/summary.txt"
{
  echo "date: $(date -u +%FT%TZ)"; uname -a; nproc; node --version
  nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version,mig.mode.current,clocks.max.sm --format=csv
} > "$summary" 2>&1
{ nvidia-smi topo -m; echo; nvidia-smi topo -p2p n; echo; nvidia-smi nvlink -s; } > "$OUT/nvidia-smi-topo.txt" 2>&1

# Reads one daemon's state into $OUT/<name>-*.json and prints its summary lines
# (kept under .device/, inside the checkout, so it resolves node_modules).
mkdir -p .device
REPORT=$ROOT/.device/fleet-report.mjs
cat > "$REPORT" <<'JS'
import { writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
const [base, dbPath, prefix, dumpRaw] = process.argv.slice(2);
const root = process.env.TOPOD_ROOT;
const get = async (path) => {
  const response = await fetch(base + path);
  const text = await response.text();
  let body = text;
  try { body = JSON.parse(text); } catch {}
  return { status: response.status, body };
};
const gpus = (await get('/v1/gpus')).body.gpus ?? [];
const jobs = (await get('/v1/jobs?limit=100')).body.jobs ?? [];
const node = await get('/v1/node');
const metrics = await get('/metrics');
const topologies = {};
for (const gpu of gpus) topologies[gpu.uuid] = (await get(`/v1/gpus/${gpu.uuid}/topology`)).body;
const probeJobs = jobs.filter((j) => j.startedAt && j.finishedAt);
const ms = (t) => Date.parse(t);
const perGpu = probeJobs.map((j) => ({ gpu: j.gpuUuid, state: j.state, startedAt: j.startedAt, finishedAt: j.finishedAt, durationMs: ms(j.finishedAt) - ms(j.startedAt) }));
const wallMs = probeJobs.length ? Math.max(...probeJobs.map((j) => ms(j.finishedAt))) - Math.min(...probeJobs.map((j) => ms(j.startedAt))) : null;
writeFileSync(`${prefix}-state.json`, JSON.stringify({ gpus, jobs, node: node.body, topologies, timing: { perGpu, wallMs } }, null, 1));
if (metrics.status === 200) writeFileSync(`${prefix}-metrics.txt`, String(metrics.body));
const lines = [];
lines.push(`GPUs: ${gpus.map((g) => `${g.index} ${g.uuid} ${g.name} (${g.probe.status})`).join('; ')}`);
lines.push(`probe jobs: ${perGpu.map((j) => `${j.gpu} ${j.state} ${j.durationMs} ms`).join('; ')}; wall ${wallMs} ms`);
if (node.status === 200) {
  lines.push(`node agreement: ${node.body.agreement.agree} (${node.body.agreement.models.map((m) => `${m.name}: ${m.measuredGpus} measured, ${m.compared} compared, ${m.differences.length} differ${m.differences.map((d) => ` [${d.element}.${d.attribute} spread ${(d.spread * 100).toFixed(2)} % > ${d.tolerance * 100} %]`).join('')}`).join('; ')})`);
  lines.push(`links: ${node.body.links.map((l) => `${l.indices.join('-')} ${l.topo} nvlink=${JSON.stringify(l.nvlink)} pcie=${l.pcie.commonAncestor} p2p=${JSON.stringify(l.p2p)}${l.degraded.length ? ` degraded=${l.degraded.join(',')}` : ''}`).join('; ') || 'none'}`);
} else lines.push(`GET /v1/node: ${node.status}`);
if (metrics.status === 200) {
  const text = String(metrics.body);
  lines.push(`/metrics: ${text.split('\n').filter((l) => l && !l.startsWith('#')).length} series; ${gpus.map((g) => `${g.uuid}: ${text.split('\n').filter((l) => l.includes(`UUID="${g.uuid}"`)).length}`).join('; ')}`);
} else lines.push(`/metrics: ${metrics.status}`);
if (dumpRaw === 'raw') {
  const gpu0 = gpus.find((g) => g.index === 0);
  const resultId = gpu0 && topologies[gpu0.uuid]?.probe?.resultId;
  if (resultId) {
    const { ResultStore } = await import(`${root}/server/store/results.ts`);
    const db = new Database(dbPath, { readonly: true });
    const raw = new ResultStore(db).rawSeries(resultId);
    db.close();
    writeFileSync(`${prefix}-gpu0-raw.json`, JSON.stringify({ recordedAt: new Date().toISOString(), gpu: gpu0, resultId, document: topologies[gpu0.uuid], raw }));
    lines.push(`GPU 0 raw series: ${raw.length} series (result ${resultId}) in ${prefix}-gpu0-raw.json`);
  } else lines.push('GPU 0 raw series: no result id in its document');
}
console.log(lines.join('\n'));
JS

# run NAME CONCURRENCY PORT [raw]: a fresh database, the daemon until every GPU's probe ended, its report.
run() {
  local name=$1 concurrency=$2 port=$3 raw=${4:-}
  local db=/tmp/topod-fleet-$name.sqlite
  rm -f "$db"*
  rm -rf "$OUT/$name-features.d"
  TOPOD_BACKEND=native TOPOD_DB=$db TOPOD_PORT=$port TOPOD_PROBE_CONCURRENCY=$concurrency \
    TOPOD_NFD_FEATURES_DIR="$OUT/$name-features.d" TOPOD_LOCK_DIR=/tmp/topod-fleet-locks \
    node --import tsx server/main.ts > "$OUT/$name-daemon.log" 2>&1 &
  local daemon=$! t0; t0=$(date +%s)
  local state=""
  for _ in $(seq 900); do
    state=$(node -e "fetch('http://127.0.0.1:$port/v1/gpus').then(r=>r.json()).then(b=>{const g=b.gpus||[];console.log(g.length>0&&g.every(x=>x.probe.status==='probed'||x.probe.status==='failed')?'done':'wait')},()=>console.log('wait'))")
    [ "$state" = done ] && break; sleep 1
  done
  # One NVML poll after the probes, so /v1/node has live links.
  sleep 3
  {
    echo "== $name (TOPOD_PROBE_CONCURRENCY=$concurrency): all probes ended after $(( $(date +%s) - t0 )) s ($state)"
    TOPOD_ROOT=$ROOT node --import tsx "$REPORT" "http://127.0.0.1:$port" "$db" "$OUT/$name" $raw
    echo "NFD labels: $(grep -v '^#' "$OUT/$name-features.d/topod" 2>/dev/null | tr '\n' ' ')"
  } >> "$summary" 2>&1
  kill -TERM $daemon; wait $daemon
  cp "$db" "$OUT/$name.sqlite" 2>/dev/null
}

run serial 1 18081
run parallel 2 18082 raw

# The acceptance figure: parallel wall time against one GPU's own probe time (the serial run's slowest job).
node -e "
const s=require('$OUT/serial-state.json'), p=require('$OUT/parallel-state.json');
const single=Math.max(...s.timing.perGpu.map(j=>j.durationMs)), wall=p.timing.wallMs;
console.log('single GPU probe (serial run, slowest job): '+single+' ms; parallel wall time: '+wall+' ms; ratio '+(wall/single).toFixed(2)+' (goal <= 1.3): '+(wall<=1.3*single?'PASS':'FAIL'));
const uuids=x=>x.gpus.map(g=>g.uuid).sort().join(',');
console.log('same GPUs in both runs: '+(uuids(s)===uuids(p)));
" >> "$summary" 2>&1
cat "$summary"
