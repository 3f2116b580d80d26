import { Controller, Get, Module, Req } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Express, Request } from 'express';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PreshapedExpressAdapter } from './express-adapter';

@Controller('probe')
class ProbeController {
  @Get()
  probe(@Req() request: Request): { path: string; query: unknown; host: string | undefined } {
    // Express's own request helpers must work on the pre-shaped objects.
    return { path: request.path, query: request.query, host: request.get('host') };
  }
}

@Module({ controllers: [ProbeController] })
class ProbeModule {}

describe('PreshapedExpressAdapter', () => {
  let app: NestExpressApplication;
  let url: string;
  const seen: { requestIsExpress: boolean; responseIsExpress: boolean }[] = [];

  beforeAll(async () => {
    const adapter = new PreshapedExpressAdapter(32 * 1024);
    app = await NestFactory.create<NestExpressApplication>(ProbeModule, adapter, { logger: false });
    const express = adapter.getInstance<Express>();
    const server = app.getHttpServer();
    // Runs before Express's handler: what the server built, before Express sets any prototype.
    server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
      seen.push({
        requestIsExpress: Object.getPrototypeOf(request) === express.request,
        responseIsExpress: Object.getPrototypeOf(response) === express.response,
      });
    });
    await app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await app.close();
  });

  it("builds requests and responses with Express's prototypes, so Express never changes them", async () => {
    seen.length = 0;
    const res = await fetch(`${url}/probe?a=1&b=two`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ path: '/probe', query: { a: '1', b: 'two' }, host: new URL(url).host });
    expect(seen).toEqual([{ requestIsExpress: true, responseIsExpress: true }]);
  });

  it('keeps the header limit it was given: larger headers get 431', async () => {
    const ok = await fetch(`${url}/probe`, { headers: { 'x-filler': 'a'.repeat(20 * 1024) } });
    expect(ok.status).toBe(200);
    const tooLarge = await fetch(`${url}/probe`, { headers: { 'x-filler': 'a'.repeat(40 * 1024) } });
    expect(tooLarge.status).toBe(431);
  });
});
