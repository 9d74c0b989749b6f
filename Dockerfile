# The k8or operator image: the manager process (`k8or operator --webhook`) with every provider
# package installed (aws, gcp, azure), on the official Node 24 slim image, running as non-root.
# Built elsewhere (CI with a Docker engine): docker build -t ghcr.io/k8or/k8or:0.1.0 .

# --- build: install every workspace, compile, then drop the dev dependencies
FROM node:24-slim AS build
WORKDIR /src
COPY . .
RUN npm ci --no-audit --no-fund \
 && npx turbo run build --filter=@k8or/cli... --filter='./providers/*' \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -rf packages/*/src providers/*/src packages/*/test providers/*/test packages/provider-testkit test bench

# --- runtime: the compiled packages and their production dependencies only
FROM node:24-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/packages ./packages
COPY --from=build /src/providers ./providers
# 65532: the chart's runAsUser; a numeric user lets the kubelet check runAsNonRoot
USER 65532:65532
EXPOSE 8080 8081 9443
# glibc malloc: at most two arenas instead of up to eight per core (Node's threads, V8's GC and
# compiler helpers and libuv's pool, each took one and kept its freed pages), and fixed mmap and
# trim thresholds (glibc raises both after freeing a large block, then keeps up to 64 MiB of freed
# memory): 1,000 Buckets in sync at 113 MiB RSS instead of 130, the same CPU per reconcile; with
# the flags below and the lazy SDKs, 10,000 in sync at 129 MiB instead of 158
# (docs/benchmarks.md, "Operator process at scale"). The mmap threshold is 32 KiB: zlib's buffers
# of a compact cache's encode and decode (64 KiB each) then come from mmap and go back at once
# instead of fragmenting the arena (33,334 Buckets: 146 MiB instead of 203 with the cache as parsed objects).
ENV MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=32768 MALLOC_TRIM_THRESHOLD_=131072
# V8 sizing: a burst of reconciles grows the young generation and V8 keeps what it committed; with
# these flags the operator holds 10,000 Buckets in sync at about 158 MiB RSS instead of 297 MiB
# (docs/benchmarks.md, "Operator process at scale"). --max-opt=2 stops at Maglev: TurboFan's code
# and compile memory cost a replica about 5 MiB, and the assigner's full pass took more CPU with it.
# --optimize-for-size and --max-opt are refused in NODE_OPTIONS.
ENTRYPOINT ["node", "--max-semi-space-size=2", "--optimize-for-size", "--max-opt=2", "/app/packages/cli/dist/bin.js"]
CMD ["operator", "--webhook"]
