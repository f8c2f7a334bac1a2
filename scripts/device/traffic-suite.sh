#!/usr/bin/env bash
# Issue 20's GPU checks (L2 <-> device-memory traffic), from this checkout on a
# GPU host after `bash scripts/device/unpack.sh` (pack.sh here, carried as
# .device/). Builds on the device (nvcc; no cmake needed) the probe from this
# checkout and a standalone CUPTI check, then:
#  (a) the standalone check: dram__bytes_read.sum / dram__bytes_write.sum (and
#      the L2's sector counts) around each strided kernel, CUPTI linked directly;
#  (b) the probe's traffic op: the paper's sweep by counters and by timing;
#  (c) ncu on the probe's vecMul kernels, when ncu is there (a third opinion);
#  (d) the traffic kernels' SASS (every access kept);
#  (e) the daemon end to end: validate:gpu --runs 1 --traffic (a full probe,
#      then the opt-in traffic probe, printed beside the paper's A100).
# Never changes device settings. Everything goes into $OUT/traffic.tar.gz
# (OUT defaults to /tmp/topod-traffic-out); a summary is printed at the end.
# PARTS picks the parts (default "check probe ncu sass daemon"); the build always runs.
# Each part has its own timeout, so one run stays within about 9 minutes.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/topod-traffic-out}
mkdir -p "$OUT"
W=$(mktemp -d /tmp/topod-traffic.XXXXXX)
[ -f .device/node.xz ] && bash scripts/device/unpack.sh > "$W/unpack.log" 2>&1
export PATH=/tmp/nodebin:$PATH:/usr/local/cuda/bin
summary="$W/summary.txt"
step() { # name command...: runs, times, records the exit status in the summary
  local name=$1; shift
  local t0; t0=$(date +%s%N)
  "$@" > "$W/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc in $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> "$summary"
  return $rc
}
{
  echo "date: $(date -u +%FT%TZ)"; uname -r; nproc
  nvidia-smi --query-gpu=name,uuid,driver_version,mig.mode.current,clocks.sm,clocks.max.sm,clocks.mem --format=csv
  echo "RmProfilingAdminOnly: $(grep -h RmProfilingAdminOnly /proc/driver/nvidia/params 2>/dev/null || echo unknown)"
  echo "nvcc: $(command -v nvcc) $(nvcc --version 2>/dev/null | tail -1)"
  echo "ncu: $(command -v ncu || echo none)"
  echo "libcupti candidates:"; ls -l /usr/local/cuda*/extras/CUPTI/lib64/libcupti.so* /usr/local/cuda*/lib64/libcupti.so* /usr/local/cuda*/targets/*/lib/libcupti.so* 2>/dev/null
  echo "libnvperf_host candidates:"; ls -l /usr/local/cuda*/extras/CUPTI/lib64/libnvperf_host.so* /usr/local/cuda*/lib64/libnvperf_host.so* /usr/local/cuda*/targets/*/lib/libnvperf_host.so* 2>/dev/null
} > "$summary" 2>&1

CUDA_ROOT=${CUDA_HOME:-/usr/local/cuda}
[ -d "$CUDA_ROOT/include" ] || CUDA_ROOT=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
CUPTI_LIB=$(dirname "$(ls "$CUDA_ROOT"/extras/CUPTI/lib64/libcupti.so "$CUDA_ROOT"/lib64/libcupti.so "$CUDA_ROOT"/targets/*/lib/libcupti.so 2>/dev/null | head -1)" 2>/dev/null)
CUPTI_INC=$CUDA_ROOT/include; [ -f "$CUDA_ROOT/extras/CUPTI/include/cupti.h" ] && CUPTI_INC=$CUDA_ROOT/extras/CUPTI/include
echo "CUDA_ROOT=$CUDA_ROOT CUPTI_LIB=$CUPTI_LIB CUPTI_INC=$CUPTI_INC" >> "$summary"
ARCH=${ARCH:-sm_90}
PARTS=" ${PARTS:-check probe ncu sass daemon} "
want() { [[ "$PARTS" == *" $1 "* ]]; }

# Build: the probe, every source in parallel (what CMake would do, without needing cmake), and the check.
build_probe() {
  mkdir -p "$W/obj"
  ls native/probe/src/*.cu native/probe/src/*.cpp | xargs -P "$(nproc)" -I{} sh -c \
    'nvcc -std=c++17 -O2 -arch='"$ARCH"' -Xcompiler -Wall -c "{}" -o "'"$W"'/obj/$(basename "{}").o"' &&
    nvcc -arch="$ARCH" "$W"/obj/*.o -o "$W/topod-probe" -ldl
}
step build-probe build_probe
step build-check nvcc -std=c++17 -O2 -arch="$ARCH" scripts/device/traffic/cupti-check.cu -I"$CUPTI_INC" -L"$CUPTI_LIB" -lcupti \
  -Xlinker -rpath -Xlinker "$CUPTI_LIB" -o "$W/cupti-check"
PROBE=$W/topod-probe

# (a) The standalone check at the paper's footprints (50M and 200M floats); one JSON line per case.
if want check; then
  for mib in 191 763; do
    step "cupti-check-$mib" timeout 100 "$W/cupti-check" "$mib"
  done
  head -3 "$W/cupti-check-191.log" >> "$summary"
fi

# (b) The probe: hello, then the sweep (counters, then timing), and the counters again without a CUPTI
#     it can find (must answer unsupported with the reason).
echo '{"id":0,"op":"hello","args":{}}' | "$PROBE" > "$W/hello.json" 2> "$W/hello.err"
if want probe; then
node scripts/device/traffic/sweep-requests.mjs counters > "$W/requests-counters.jsonl"
node scripts/device/traffic/sweep-requests.mjs timing > "$W/requests-timing.jsonl"
step probe-counters sh -c "TOPOD_PROBE_DEADLINE_MS=200000 timeout 200 '$PROBE' < '$W/requests-counters.jsonl' > '$W/probe-counters.jsonl'"
step probe-timing sh -c "TOPOD_PROBE_DEADLINE_MS=150000 timeout 150 '$PROBE' < '$W/requests-timing.jsonl' > '$W/probe-timing.jsonl'"
head -1 "$W/requests-counters.jsonl" | sed 's/"footprintBytes":[0-9]*/"footprintBytes":1048576/' > "$W/requests-nocupti.jsonl"
step probe-nocupti sh -c "TOPOD_CUPTI_PATH=/nonexistent LD_LIBRARY_PATH= PATH=/usr/bin:/bin '$PROBE' < '$W/requests-nocupti.jsonl' > '$W/probe-nocupti.jsonl'"
for f in probe-counters probe-timing probe-nocupti; do
  echo "$f: $(grep -c '"ok":true' "$W/$f.jsonl" 2>/dev/null) ok, $(grep -c '"ok":false' "$W/$f.jsonl" 2>/dev/null) errors" >> "$summary"
  grep -o '"error":{[^}]*}' "$W/$f.jsonl" 2>/dev/null | head -5 >> "$summary"
done
fi

# (c) ncu on the probe's vecMul kernels at 200M floats (a warm-up and one timed launch each; ncu flushes caches before each kernel).
if want ncu && command -v ncu > /dev/null; then
  node -e '
    const strides=[1,2,4,8,16,32,64,128,256,512,1024]; const cases=[];
    for (const s of strides) cases.push({pattern:"vecmul",elementBytes:4,strideElements:s,target:"fresh"});
    console.log(JSON.stringify({id:1,op:"traffic",args:{method:"timing",footprintBytes:800000000,repetitions:1,cases}}));' > "$W/requests-ncu.jsonl"
  step ncu sh -c "timeout 90 ncu --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum \
    -k regex:vecmul_kernel --csv '$PROBE' < '$W/requests-ncu.jsonl' > '$W/ncu.csv'"
fi

# (d) SASS of the traffic kernels.
if command -v cuobjdump > /dev/null; then DISASM="cuobjdump -sass"; else DISASM=nvdisasm; fi
want sass && step sass sh -c "nvcc -std=c++17 -cubin -arch=$ARCH native/probe/src/traffic.cu -o '$W/traffic.cubin' && $DISASM '$W/traffic.cubin' > '$W/traffic.sass'"
want sass && node --import tsx test/integration/probe/traffic-accesses-cli.ts sass "$W/traffic.sass" > "$W/traffic-sass.report" 2>&1
want sass && tail -1 "$W/traffic-sass.report" >> "$summary"

# (e) The daemon on the native backend with the probe just built.
if want daemon; then
  mkdir -p native/probe/build && cp "$PROBE" native/probe/build/topod-probe
  step daemon timeout 150 node --import tsx scripts/validate-gpu.ts --runs 1 --traffic --json "$W/validate.json" --raw "$W/validate-raw.json"
  sed -n '/^## traffic/,$p' "$W/daemon.log" >> "$summary"
fi

rm -rf "$W/obj"
tar -C "$W" -czf "$OUT/traffic.tar.gz" --exclude=topod-probe --exclude=cupti-check --exclude='*.cubin' .
cat "$summary"
echo "output: $OUT/traffic.tar.gz"
