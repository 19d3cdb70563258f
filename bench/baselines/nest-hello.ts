/**
 * The baseline for `get` and `list`: NestJS on Fastify (the gateway's stack) answering one GET route with a small
 * JSON object, nothing else. Run by `npm run bench` as a child process; prints `{"url": ...}` once it listens.
 *   node -r ./scripts/register.cjs bench/baselines/nest-hello.ts
 */
import 'reflect-metadata';
import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';

@Controller()
class HelloController {
  @Get('/hello')
  hello() {
    return { hello: 'world' };
  }
}

@Module({ controllers: [HelloController] })
class HelloModule {}

async function main(): Promise<void> {
  const app = await NestFactory.create<NestFastifyApplication>(HelloModule, new FastifyAdapter(), { logger: false });
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
  const stop = () => void app.close().finally(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
