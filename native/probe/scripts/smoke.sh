#!/usr/bin/env bash
# Runs every probe op on the local GPU by piping JSON lines into topod-probe,
# including series for fixtures (L1, L2, device memory sweeps) and bad requests.
# Usage: smoke.sh [probe] [outdir]   (default native/probe/build/topod-probe, ./smoke-out)
# Writes requests.jsonl, responses.jsonl, stderr.log, env.txt into outdir.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
probe="${1:-$here/../build/topod-probe}"
out="${2:-./smoke-out}"
mkdir -p "$out"

# SMs of GPU 0, for the compute placements (one block per SM); 132 when hello does not say.
sms=$(echo '{"id":0,"op":"hello","args":{}}' | "$probe" 2>/dev/null | grep -o '"multiprocessorCount":[0-9]*' | head -1 | cut -d: -f2)
sms=${sms:-132}

id=0
req() { id=$((id + 1)); printf '{"id":%d,"op":"%s","args":%s}\n' "$id" "$1" "$2"; }
chase() { # space arrayBytes strideBytes pattern warmup samples
  req pchase "{\"space\":\"$1\",\"arrayBytes\":$2,\"strideBytes\":$3,\"pattern\":\"$4\",\"warmup\":$5,\"samples\":$6}"
}

{
  req hello '{}'
  req calibrate '{"samples":1024}'
  # Physics: L1-resident < L2-resident < device memory.
  chase global.ca 16384 128 sequential true 256
  chase global.cg 4194304 128 random true 256
  chase global.cg 1073741824 4096 random false 1024
  # Every space once.
  for s in global.ca global.cg readonly texture constant shared global; do chase "$s" 8192 64 sequential true 256; done
  req pchase '{"space":"global.ca","arrayBytes":16384,"strideBytes":128,"pattern":"sequential","warmup":true,"samples":64,"smId":7}'
  # L1 size sweep (one chaser per SM, 8 KiB .. 320 KiB).
  sizes=""; for k in $(seq 8 8 320); do sizes="$sizes${sizes:+,}$((k * 1024))"; done
  req pchase.batch "{\"space\":\"global.ca\",\"arrayBytesList\":[$sizes],\"strideBytes\":128,\"pattern\":\"sequential\",\"warmup\":true,\"samples\":512}"
  # Texture and read-only sweeps on the same sizes.
  req pchase.batch "{\"space\":\"texture\",\"arrayBytesList\":[$sizes],\"strideBytes\":128,\"pattern\":\"sequential\",\"warmup\":true,\"samples\":512}"
  req pchase.batch "{\"space\":\"readonly\",\"arrayBytesList\":[$sizes],\"strideBytes\":128,\"pattern\":\"sequential\",\"warmup\":true,\"samples\":512}"
  # Constant sweep 256 B .. 4 KiB, stride 64 (all chains share the 64 KiB bank).
  csizes=""; for k in $(seq 256 256 4096); do csizes="$csizes${csizes:+,}$k"; done
  req pchase.batch "{\"space\":\"constant\",\"arrayBytesList\":[$csizes],\"strideBytes\":64,\"pattern\":\"sequential\",\"warmup\":true,\"samples\":256}"
  # L2 size sweep, one at a time (the L2 is shared): 8 MiB .. 96 MiB.
  for m in $(seq 8 4 96); do chase global.cg $((m * 1048576)) 128 random true 512; done
  # Device memory latency at a few strides.
  for st in 512 4096 65536; do chase global.cg 2147483648 $st random false 1024; done
  # Line size / fetch granularity: cold sequential walks at a 32-byte stride.
  chase global.ca 65536 32 sequential false 1024
  chase global.cg 65536 32 sequential false 1024
  # Cold must be cold (issue 8): a 4 MiB chain just built sits dirty in the L2; flushL2 pushes it out first.
  req pchase '{"space":"global.cg","arrayBytes":4194304,"strideBytes":128,"pattern":"random","warmup":false,"samples":512}'
  req pchase '{"space":"global.cg","arrayBytes":4194304,"strideBytes":128,"pattern":"random","warmup":false,"samples":512,"flushL2":true}'
  req pchase '{"space":"global.cg","arrayBytes":65536,"strideBytes":32,"pattern":"sequential","warmup":false,"samples":1024,"flushL2":true,"l2FetchGranularityBytes":32}'
  req pchase '{"space":"global.cg","arrayBytes":65536,"strideBytes":32,"pattern":"sequential","warmup":false,"samples":1024,"flushL2":true,"l2FetchGranularityBytes":128}'
  req pchase.batch "{\"space\":\"global.ca\",\"arrayBytesList\":[65536,131072,262144],\"strideBytes\":128,\"pattern\":\"sequential\",\"warmup\":false,\"samples\":256,\"flushL2\":true,\"carveoutPercent\":50}"
  # Carveout: the same L1-sized walk preferring most L1 and most shared memory.
  req pchase '{"space":"global.ca","arrayBytes":131072,"strideBytes":128,"pattern":"sequential","warmup":true,"samples":256,"carveoutPercent":0}'
  req pchase '{"space":"global.ca","arrayBytes":131072,"strideBytes":128,"pattern":"sequential","warmup":true,"samples":256,"carveoutPercent":100}'
  # Consumer self-test: every space warm, and device memory cold (flushed).
  for s in global.ca global.cg readonly texture constant shared; do
    req selftest.consumer "{\"space\":\"$s\",\"arrayBytes\":8192,\"strideBytes\":64,\"pattern\":\"sequential\",\"warmup\":true,\"samples\":256}"
  done
  req selftest.consumer '{"space":"global.cg","arrayBytes":1073741824,"strideBytes":4096,"pattern":"random","warmup":false,"samples":512,"flushL2":true,"smId":3}'
  # Pairs: L1 shared by two warps of one SM; L2 shared across SMs.
  req pchase.pair '{"first":{"space":"global.ca","arrayBytes":65536,"strideBytes":128},"second":{"space":"global.ca","arrayBytes":65536,"strideBytes":128},"placement":"same-sm","samples":256}'
  req pchase.pair '{"first":{"space":"global.ca","arrayBytes":131072,"strideBytes":128},"second":{"space":"global.ca","arrayBytes":131072,"strideBytes":128},"placement":"same-sm","samples":256}'
  req pchase.pair '{"first":{"space":"global.ca","arrayBytes":131072,"strideBytes":128},"second":{"space":"global.ca","arrayBytes":131072,"strideBytes":128},"placement":"different-sm","samples":256}'
  req pchase.pair '{"first":{"space":"global.cg","arrayBytes":16777216,"strideBytes":128,"pattern":"random"},"second":{"space":"global.cg","arrayBytes":67108864,"strideBytes":128,"pattern":"random"},"placement":"different-sm","samples":256}'
  # Bandwidth: device memory (1 GiB) and L2-resident (8 MiB).
  for mode in read write; do
    req bandwidth "{\"mode\":\"$mode\",\"arrayBytes\":1073741824,\"blocks\":1056,\"threadsPerBlock\":1024,\"repetitions\":10}"
    req bandwidth "{\"mode\":\"$mode\",\"arrayBytes\":8388608,\"blocks\":1056,\"threadsPerBlock\":1024,\"repetitions\":20}"
  done
  # Bandwidth search (issue 9): passes inside one launch, .cg L2 reads, full-sector writes, the D2D copy
  # reference; 22.5 MiB (about half an H100's L2) and 400 MiB (8x its L2), every SM with 2048 threads.
  for hint in cg default; do
    req bandwidth "{\"mode\":\"read\",\"arrayBytes\":23592960,\"blocks\":$((2 * sms)),\"threadsPerBlock\":1024,\"passes\":64,\"cacheHint\":\"$hint\",\"repetitions\":5}"
  done
  req bandwidth "{\"mode\":\"write\",\"arrayBytes\":23592960,\"blocks\":$((2 * sms)),\"threadsPerBlock\":1024,\"passes\":64,\"repetitions\":5}"
  for mode in read write; do
    req bandwidth "{\"mode\":\"$mode\",\"arrayBytes\":419430400,\"blocks\":$((2 * sms)),\"threadsPerBlock\":1024,\"passes\":4,\"repetitions\":5}"
  done
  req bandwidth.copy '{"arrayBytes":419430400,"repetitions":5}'
  # Compute and thread block clusters (issue 10; unsupported before sm_90): the SM census, the
  # cluster limits, placements of every cluster size (3 rounds), barrier latencies at 1 and 1024
  # threads, DSMEM latency and push/pull/global transfers, cluster launch overhead.
  req compute.smid "{\"clusterSize\":1,\"clusters\":$sms,\"repetitions\":1}"
  req cluster.limits '{}'
  for c in $(seq 16 -1 2); do req compute.smid "{\"clusterSize\":$c,\"clusters\":$((sms / c)),\"repetitions\":3}"; done
  for c in 1 2 4 8 16; do req cluster.sync "{\"clusterSize\":$c,\"threadsPerBlock\":1,\"samples\":256}"; done
  req cluster.sync '{"clusterSize":16,"threadsPerBlock":1024,"samples":256}'
  req cluster.dsmem '{"samples":512,"transferBytes":32768,"threadsPerBlock":32,"repetitions":16}'
  req cluster.dsmem '{"samples":64,"transferBytes":32768,"threadsPerBlock":1024,"repetitions":16}'
  for c in 2 4 8 16; do req cluster.launch "{\"clusterSize\":$c,\"blocks\":$(( (4 * sms + c - 1) / c * c )),\"spinNs\":50000,\"repetitions\":5}"; done
  # L2 partitions (issue 9): every SM times each 256 B chunk of one shared 512 KiB array (3 launches,
  # SM groups and near/far hits), and of its own array (private), and a 64 B stride inside the chunks.
  for r in 1 2 3; do req l2.partition '{"mode":"shared","arrayBytes":524288,"strideBytes":256}'; done
  req l2.partition '{"mode":"private","arrayBytes":524288,"strideBytes":256}'
  req l2.partition '{"mode":"shared","arrayBytes":131072,"strideBytes":64}'
  # Past one partition (issue 9): SMs 0 and 6 (different partition groups on the H100) in turn, 512 chunks each:
  # 1.5 x 25 MiB (far-partition hits past capacity ~465, near device memory ~570), 4 x 50 MiB (device memory
  # near ~570 / far ~750); shared mode at 0.75 and 1.25 x 25 MiB (does SM 0 keep its lines after SM 6 read them?).
  req l2.farnear '{"smIds":[0,6],"arrayBytes":39321600,"strideBytes":76800,"passes":2,"shared":false}'
  req l2.farnear '{"smIds":[0,6],"arrayBytes":209715200,"strideBytes":409600,"passes":2,"shared":false}'
  req l2.farnear '{"smIds":[0,6],"arrayBytes":19660800,"strideBytes":76800,"passes":2,"shared":true}'
  req l2.farnear '{"smIds":[0,6],"arrayBytes":32768000,"strideBytes":128000,"passes":2,"shared":true}'
  req l2.farnear '{"smIds":[6],"arrayBytes":19660800,"strideBytes":76800,"shared":false}'
  # Persisting L2 window over 12.5 MiB of a 100 MiB stream, without and with (hitRatio 1, then 0.5).
  req l2.persist '{"arrayBytes":104857600,"windowBytes":13107200,"hitRatio":1,"samples":128}'
  req l2.persist '{"arrayBytes":104857600,"windowBytes":13107200,"hitRatio":0.5,"samples":128}'
  # A pair on chosen SMs (0 and 6): global.ca (per-SM L1s: no eviction) and global.cg (one L2).
  req pchase.pair '{"first":{"space":"global.ca","arrayBytes":131072,"strideBytes":128},"second":{"space":"global.ca","arrayBytes":131072,"strideBytes":128},"placement":"different-sm","smIds":[0,6],"samples":256}'
  req pchase.pair '{"first":{"space":"global.cg","arrayBytes":1048576,"strideBytes":128},"second":{"space":"global.cg","arrayBytes":1048576,"strideBytes":128},"placement":"different-sm","smIds":[6,0],"samples":256}'
  # Bad requests: each must get an error response while the probe keeps serving.
  chase global.ca -4096 64 sequential true 16
  chase global.ca 1099511627776 4096 sequential false 16
  chase l7 4096 64 sequential true 16
  chase global.ca 4096 6 sequential true 16
  chase constant 1048576 64 sequential true 16
  req pchase '{"space":"global.ca","arrayBytes":4096,"strideBytes":64,"pattern":"sequential","warmup":true,"samples":16,"flushL2":"yes"}'
  req pchase.pair '{"first":{"space":"global.ca","arrayBytes":4096,"strideBytes":64},"second":{"space":"global.ca","arrayBytes":4096,"strideBytes":64},"placement":"same-sm","samples":16,"carveoutPercent":101}'
  req selftest.consumer '{"space":"global.ca","arrayBytes":4096,"strideBytes":64,"pattern":"sequential","warmup":"no","samples":16}'
  req cluster.sync '{"clusterSize":17,"threadsPerBlock":1,"samples":16}'
  req cluster.dsmem '{"samples":16,"transferBytes":12,"threadsPerBlock":32,"repetitions":1}'
  req bandwidth '{"mode":"write","arrayBytes":4096,"blocks":1,"threadsPerBlock":32,"passes":2,"cacheHint":"cg","repetitions":1}'
  req bandwidth '{"mode":"read","arrayBytes":4096,"blocks":1,"threadsPerBlock":32,"passes":0,"repetitions":1}'
  req bandwidth.copy '{"arrayBytes":4100,"repetitions":1}'
  req l2.partition '{"mode":"shared","arrayBytes":4194304,"strideBytes":256}'
  req l2.farnear "{\"smIds\":[0,$sms],\"arrayBytes\":1048576,\"shared\":false}"
  req l2.persist '{"arrayBytes":1048576,"windowBytes":1048576,"hitRatio":0,"samples":16}'
  req pchase.pair "{\"first\":{\"space\":\"global.ca\",\"arrayBytes\":4096,\"strideBytes\":64},\"second\":{\"space\":\"global.ca\",\"arrayBytes\":4096,\"strideBytes\":64},\"placement\":\"different-sm\",\"smIds\":[0,$sms],\"samples\":16}"
  echo '{"id":999,"op":"pchase","args":{"space":'
  req warp-drive '{}'
  req hello '{}'
} > "$out/requests.jsonl"

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(hostname)"
  echo "command: $0 $probe $out"
  nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,mig.mode.current --format=csv 2>&1
} > "$out/env.txt"

start=$(date +%s%N)
"$probe" < "$out/requests.jsonl" > "$out/responses.jsonl" 2> "$out/stderr.log"
rc=$?
end=$(date +%s%N)
echo "probe exit: $rc, $(( (end - start) / 1000000 )) ms, $(wc -l < "$out/requests.jsonl") requests, $(wc -l < "$out/responses.jsonl") responses" | tee -a "$out/env.txt"
grep -c '"ok":true' "$out/responses.jsonl" | sed 's/^/ok responses: /'
grep '"ok":false' "$out/responses.jsonl" | cut -c1-220
exit $rc
