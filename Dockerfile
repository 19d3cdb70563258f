# One image for every service; the compose file picks the entry point (`npm run start:<service>`).
FROM node:20-bookworm
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
COPY libs libs
COPY services services
COPY tools tools
COPY scripts scripts
COPY tsconfig.base.json tsconfig.json ./
RUN npm ci --omit=dev --no-audit --no-fund
ENV NODE_ENV=production
CMD ["npm", "start"]
