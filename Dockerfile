# One image for every service; the compose file picks the entry point (`npm run start:<service>`).
# Node.js 24 LTS, the line package.json pins (devDependencies.node, pruned below with the dev dependencies, so the
# image's own Node.js 24 runs the service). No compiler: the native modules (better-sqlite3 13, @node-rs/argon2,
# @swc/core) ship N-API binaries, and `npm ci`'s postinstall fails the build if one does not load.
FROM node:24-bookworm
WORKDIR /app
COPY package.json package-lock.json ./
COPY libs libs
COPY services services
COPY tools tools
COPY packages packages
COPY scripts scripts
COPY tsconfig.base.json tsconfig.json ./
# The secure fields' and the dashboard's browser bundles are built with the dev dependencies (esbuild, React), which
# are then pruned; so is Redoc, whose bundle the API reference at /docs serves (copied out first).
RUN npm ci --no-audit --no-fund && npm run build:secure-fields && npm run build:dashboard && npm run build:api-reference && npm prune --omit=dev --no-audit --no-fund
ENV NODE_ENV=production
CMD ["npm", "start"]
