#!/usr/bin/env bash
# CI: compiles the probe's kernels and host code for AMD gfx90a with Debian's
# hipcc (HIP 5.2, clang 15: knows gfx90a and inline GCN such as s_memtime, not
# gfx942), then links, since Debian ships libamdhip64 too. No AMD GPU is needed;
# nothing runs. Installs hipcc when missing (root, Debian/Ubuntu).
#   .ci/hip-check.sh [outdir]     (default: a temporary directory)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$(mktemp -d)}"
arch="${TOPOD_AMD_ARCH:-gfx90a}"

if ! command -v hipcc >/dev/null 2>&1; then
  echo "[hip-check] installing hipcc"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq hipcc >/dev/null
fi
export HIP_PLATFORM=amd # hipcc would pick nvcc where CUDA is installed too
echo "[hip-check] $(hipcc --version 2>/dev/null | head -1), --offload-arch=$arch, objects in $out"

mkdir -p "$out"
sources=("$root"/native/probe/src/*.cu "$root"/native/probe/src/*.cpp)
objects=()
for src in "${sources[@]}"; do objects+=("$out/$(basename "$src").o"); done
# One compile per core: each file takes seconds to tens of seconds, and CI waits for all of them. The flags are
# scripts/amd-objects-dir.mjs's AMD_COMPILE_FLAGS: .ci/run compiles into that script's folder, which the compile
# test then reads.
printf '%s\0' "${sources[@]}" | xargs -0 -P "$(nproc)" -I{} sh -c \
  'hipcc -std=c++17 -O2 -Wall --offload-arch="$1" -x hip -c "$2" -o "$3/$(basename "$2").o" && echo "[hip-check] compiled $(basename "$2")"' \
  _ "$arch" {} "$out"
# Every source compiled: the folder is complete (scripts/amd-objects-dir.mjs; the compile test reads it then).
touch "$out/complete"
hipcc --offload-arch="$arch" "${objects[@]}" -o "$out/topod-probe"
"$out/topod-probe" --version
echo "[hip-check] ok: topod-probe compiled and linked for $arch"
