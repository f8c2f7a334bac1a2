#!/usr/bin/env bash
# Proof in the machine code that every pchase stop clock waits for its load
# (issue 8), and every L2-structure kernel's too (issue 9), and that every
# traffic kernel keeps its loads and stores (issue 20): compiles native/probe/src/pchase.cu to a cubin per architecture,
# disassembles it (cuobjdump -sass, else nvdisasm) and checks, in each timed
# loop, that the register the load writes (LDG/LD/LDS/LDC/TEX/TLD) is read
# before the CS2R/S2R ... SR_CLOCKLO that stops the clock; and that the
# consumer self-test's second loop lacks that read (so the check can fail).
# The parser is test/integration/probe/timed-loads.ts (unit-tested without a
# GPU); test/integration/probe/sass-check.test.ts runs the same check.
# Usage: scripts/device/sass-check.sh [arch ...]   (default: sm_90 sm_80)
# Writes pchase-<arch>.cubin/.sass/.report to $OUT (default /tmp/topod-sass-check).
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH=/tmp/nodebin:$PATH:/usr/local/cuda/bin
OUT=${OUT:-/tmp/topod-sass-check}
mkdir -p "$OUT"
archs=("$@"); [ ${#archs[@]} -eq 0 ] && archs=(sm_90 sm_80)

command -v nvcc >/dev/null || { echo "sass-check: nvcc not found (PATH or /usr/local/cuda/bin)"; exit 2; }
if command -v cuobjdump >/dev/null; then disasm() { cuobjdump -sass "$1"; }
elif command -v nvdisasm >/dev/null; then disasm() { nvdisasm "$1"; }
else echo "sass-check: neither cuobjdump nor nvdisasm found (PATH or /usr/local/cuda/bin)"; exit 2; fi
command -v node >/dev/null || { echo "sass-check: node not found (run scripts/device/unpack.sh first)"; exit 2; }

status=0
for arch in "${archs[@]}"; do
  base="$OUT/pchase-$arch"
  if ! nvcc -std=c++17 -cubin -arch="$arch" native/probe/src/pchase.cu -o "$base.cubin"; then
    echo "sass-check: $arch: nvcc failed"; status=1; continue
  fi
  disasm "$base.cubin" > "$base.sass" || { echo "sass-check: $arch: disassembly failed"; status=1; continue; }
  if node --import tsx test/integration/probe/timed-loads-cli.ts sass "$base.sass" > "$base.report" 2>&1; then
    echo "sass-check: $arch: ok ($(grep -c '^consumed' "$base.report") consumed, $(grep -c '^UNCONSUMED' "$base.report") unconsumed timed loads)"
  else
    echo "sass-check: $arch: FAILED"; status=1
  fi
  sed 's/^/  /' "$base.report"
  # The L2-structure kernels (issue 9): every timed .cg load feeds its stop clock, and none left its window
  # (on an H100 l2.farnear once read 4 cycles: its load was issued before the start clock; the PTX looked right).
  for src in l2-partition l2-farnear l2-persist; do
    l2="$OUT/$src-$arch"
    if ! nvcc -std=c++17 -cubin -arch="$arch" "native/probe/src/$src.cu" -o "$l2.cubin"; then echo "sass-check: $arch $src: nvcc failed"; status=1; continue; fi
    disasm "$l2.cubin" > "$l2.sass" || { echo "sass-check: $arch $src: disassembly failed"; status=1; continue; }
    if node --import tsx test/integration/probe/timed-loads-cli.ts sass "$l2.sass" l2 > "$l2.report" 2>&1; then
      echo "sass-check: $arch $src: ok ($(grep -c '^consumed' "$l2.report") consumed timed loads)"
    else
      echo "sass-check: $arch $src: FAILED"; status=1
    fi
    sed 's/^/  /' "$l2.report"
  done
  # The traffic kernels (issue 20): every pattern kernel keeps its global loads and stores at its element width.
  tr="$OUT/traffic-$arch"
  if nvcc -std=c++17 -cubin -arch="$arch" native/probe/src/traffic.cu -o "$tr.cubin" && disasm "$tr.cubin" > "$tr.sass"; then
    if node --import tsx test/integration/probe/traffic-accesses-cli.ts sass "$tr.sass" > "$tr.report" 2>&1; then
      echo "sass-check: $arch traffic: ok ($(grep -c '^read\|^write\|^rmw\|^vecmul' "$tr.report") pattern kernels keep their accesses)"
    else
      echo "sass-check: $arch traffic: FAILED"; status=1
    fi
    sed 's/^/  /' "$tr.report"
  else
    echo "sass-check: $arch traffic: nvcc or disassembly failed"; status=1
  fi
done
exit $status
