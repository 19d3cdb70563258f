# One image for every service; the compose file picks the entry point (`npm run start:<service>`).
FROM node:20-bookworm
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
COPY libs libs
COPY services services
COPY tools tools
COPY packages packages
COPY scripts scripts
COPY tsconfig.base.json tsconfig.json ./
# The secure fields' and the dashboard's browser bundles are built with the dev dependencies (esbuild, React), which
# are then pruned.
RUN npm ci --no-audit --no-fund && npm run build:secure-fields && npm run build:dashboard && npm prune --omit=dev --no-audit --no-fund
ENV NODE_ENV=production
CMD ["npm", "start"]
