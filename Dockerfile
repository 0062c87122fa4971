# clawtool as a shared MCP daemon (README "Shared daemon"): streamable HTTP on :8765/mcp, probes on /healthz and /readyz.
#   docker build -t clawtool .
#   docker run -p 8765:8765 -e CLAWTOOL_HTTP_TOKEN -v ~/.config/clawtool:/config:ro clawtool
# The config (/config/config.toml) names the token: [http] token = "${CLAWTOOL_HTTP_TOKEN}". A non-loopback listen
# address without a token is refused at start. Sources run inside the container: extend this image with what their
# commands need (or use remote `url` sources).

FROM node:20-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

FROM node:20-slim
ENV NODE_ENV=production \
    CLAWTOOL_CONFIG=/config/config.toml \
    CLAWTOOL_CACHE_DIR=/tmp/clawtool-cache
WORKDIR /app
COPY --from=build /src/package.json /src/package-lock.json ./
# The bin is bundled (ADR 008); only runtime dependencies (none of the optional peers) are installed beside it.
RUN npm ci --omit=dev --omit=peer --no-audit --no-fund && npm cache clean --force
COPY --from=build /src/dist ./dist
RUN ln -s /app/dist/main.js /usr/local/bin/clawtool
USER node
EXPOSE 8765
HEALTHCHECK --interval=30s --timeout=3s CMD ["node", "-e", "fetch('http://127.0.0.1:8765/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# stdin is ignored in daemon mode; SIGTERM (docker stop) shuts down cleanly with every child gone.
ENTRYPOINT ["clawtool"]
CMD ["serve", "--listen", "0.0.0.0:8765"]
