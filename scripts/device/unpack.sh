#!/usr/bin/env bash
# Counterpart of pack.sh, run on the GPU host from the checkout's root: puts
# node on PATH (/tmp/node) and restores node_modules and the native builds.
set -euo pipefail
xz -dc .device/node.xz > /tmp/node && chmod +x /tmp/node
mkdir -p /tmp/nodebin && ln -sf /tmp/node /tmp/nodebin/node
xz -dc .device/bundle.tar.xz | tar -x
echo "node $(/tmp/node --version) ready; export PATH=/tmp/nodebin:\$PATH"
