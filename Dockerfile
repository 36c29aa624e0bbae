# syntax=docker/dockerfile:1
# PicoClaw-TS gateway image. Build: docker build -t picoclaw-ts .
# Run:  docker run --init --read-only --hostname picoclaw -p 18790:18790 -e PICOCLAW_GATEWAY_TOKEN=... -v picoclaw-data:/data picoclaw-ts
# test/process/dockerfile.test.ts runs this file's steps in a clean folder (README: "Container").
ARG NODE_IMAGE=node:20-bookworm-slim

# Build stage: every dependency, then the bundle, the type declarations and the chat page.
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json .npmrc ./
# Scripts off: the package's own `prepare` would build before the sources are here (the build
# runs below); esbuild's install step is then run on its own.
RUN npm ci --ignore-scripts --no-audit --no-fund && npm rebuild esbuild
COPY tsconfig.json ./
COPY scripts ./scripts
COPY src ./src
COPY web ./web
RUN npm run build

# Runtime stage: the production dependencies and what the package ships, owned by root
# (the gateway's user cannot change its own code); the only writable place is the /data volume.
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# No install script of a production dependency is needed, and the package's `prepare` builds.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /src/dist ./dist
COPY config ./config
COPY agents ./agents
COPY skills ./skills
COPY README.md ./
RUN mkdir -p /data && chown node:node /data
USER node
# /data holds all the gateway writes: PicoClaw's home (a config.json put there is read), the
# session folder and the workspace. The token comes from the environment at run time.
ENV PICOCLAW_HOME=/data \
    PICOCLAW_SESSION_DIR=/data/sessions \
    PICOCLAW_AGENTS_DEFAULTS_WORKSPACE=/data/workspace \
    PICOCLAW_GATEWAY_HOST=0.0.0.0 \
    PICOCLAW_GATEWAY_PORT=18790 \
    PICOCLAW_LOG_LEVEL=info
VOLUME ["/data"]
EXPOSE 18790
# Node itself (the slim image has no curl): healthy while /health answers 200.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PICOCLAW_GATEWAY_PORT||18790)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
STOPSIGNAL SIGTERM
# The gateway directly (never `npm start`, which would check the build and may rebuild): it
# handles SIGTERM and SIGINT itself, also as PID 1; run with --init (compose: init: true) so
# the children of exec are reaped.
CMD ["node", "dist/main.js", "gateway"]
