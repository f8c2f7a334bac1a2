#!/usr/bin/env bash
# Packs what a GPU host without Node needs to run topod and its GPU tests from
# this checkout: a compressed node binary and a tarball of node_modules and the
# native build outputs (x86-64, built here). Output: .device/ (git-ignored).
#   on the GPU host:  bash scripts/device/unpack.sh   (then node and npm test work)
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .device
grep -qx '/.device/' .git/info/exclude 2>/dev/null || { mkdir -p .git/info; echo '/.device/' >> .git/info/exclude; }
[ -f .device/node.xz ] || xz -T2 -6 -c "$(command -v node)" > .device/node.xz
tar -c \
  --exclude='node_modules/typescript' --exclude='node_modules/@types' \
  --exclude='node_modules/better-sqlite3/deps' --exclude='node_modules/better-sqlite3/src' \
  --exclude='node_modules/better-sqlite3/build/Release/obj*' --exclude='node_modules/better-sqlite3/build/Release/.deps' \
  --exclude='node_modules/better-sqlite3/build/deps' --exclude='*.map' --exclude='*.d.ts' \
  --exclude='node_modules/kubernetes-models' --exclude='node_modules/@kubernetes-models' --exclude='node_modules/puppeteer-core' \
  --exclude='node_modules/chromium-bidi' --exclude='node_modules/@biomejs' --exclude='node_modules/@resvg' --exclude='node_modules/lightningcss-linux-x64-gnu' \
  node_modules dist \
  native/probe/build/topod-probe native/nvml/build/Release/topod_nvml.node native/fake-nvml/build/libnvidia-ml.so.1 \
  | xz -T2 -3 > .device/bundle.tar.xz
du -h .device/*
