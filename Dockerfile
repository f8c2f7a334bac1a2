# syntax=docker/dockerfile:1
# topod: build the native parts with the CUDA toolkit, run on the CUDA runtime with Node 22 (maintenance LTS).
# Node 22, not 24: better-sqlite3 12 compiled against Node 24.19+'s headers aborts when the GC finalizes a
# statement (nodejs/node#65446; README, Quick start); Node 22 has no such pin to keep.
#   docker build -t topod .
#   docker run --gpus all -p 8080:8080 -v topod-data:/var/lib/topod \
#     -v ./topod-token:/run/secrets/topod-token:ro -e TOPOD_ADMIN_TOKEN_FILE=/run/secrets/topod-token topod
# It listens on 0.0.0.0, so it refuses to start without an admin token; for read-only exposure without one
# (mutating requests then only from inside the container) pass -e TOPOD_INSECURE=1 instead.
# test/integration/deploy/image.test.ts assembles the runtime stage's files as listed here and starts the
# daemon from them with this environment and the README's `docker run`: a file the daemon needs, left out
# below, fails that test.

FROM node:22-bookworm-slim AS node

FROM nvidia/cuda:13.0.0-devel-ubuntu24.04 AS build
RUN apt-get update && apt-get install -y --no-install-recommends cmake g++ make python3 ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=node /usr/local/bin/node /usr/local/bin/node
COPY --from=node /usr/local/lib/node_modules /usr/local/lib/node_modules
RUN ln -s /usr/local/lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts ./scripts
COPY native ./native
COPY server ./server
COPY migrations ./migrations
COPY openapi ./openapi
COPY tsconfig.json tsconfig.build.json ./
# prepare builds the NVML addon, the fake NVML library, topod-probe (nvcc) and the TypeScript.
RUN npm ci && npm prune --omit=dev

FROM nvidia/cuda:13.0.0-runtime-ubuntu24.04
# lstopo (hwloc's, without X) for GET /v1/node?format=hwloc-xml; without it that route answers 501.
RUN apt-get update && apt-get install -y --no-install-recommends hwloc-nox && rm -rf /var/lib/apt/lists/*
COPY --from=node /usr/local/bin/node /usr/local/bin/node
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/migrations ./migrations
COPY --from=build /app/openapi ./openapi
COPY ui ./ui
COPY --from=build /app/native/nvml/build/Release ./native/nvml/build/Release
COPY --from=build /app/native/probe/build/topod-probe ./native/probe/build/topod-probe
ENV TOPOD_HOST=0.0.0.0 \
    TOPOD_PORT=8080 \
    TOPOD_DB=/var/lib/topod/topod.sqlite \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility
VOLUME /var/lib/topod
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=3s CMD node -e "fetch('http://127.0.0.1:'+(process.env.TOPOD_PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
USER 0
CMD ["node", "--max-semi-space-size=4", "dist/server/main.js"]
