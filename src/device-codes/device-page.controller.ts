import { Controller, Get, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../common/access-decorators';
import { DEVICE_PAGE_CSP, DEVICE_PAGE_CSS, DEVICE_PAGE_HTML, DEVICE_PAGE_SCRIPT } from './device-page';

/** The approval page, the default `verification_uri`: a browser page, not an API route. */
@ApiExcludeController()
@Controller('device')
export class DevicePageController {
  @Get()
  @Public()
  page(@Res() response: Response): void {
    send(response, 'text/html; charset=utf-8', DEVICE_PAGE_HTML);
  }

  @Get('device.js')
  @Public()
  script(@Res() response: Response): void {
    send(response, 'text/javascript; charset=utf-8', DEVICE_PAGE_SCRIPT);
  }

  @Get('device.css')
  @Public()
  style(@Res() response: Response): void {
    send(response, 'text/css; charset=utf-8', DEVICE_PAGE_CSS);
  }
}

function send(response: Response, contentType: string, body: string): void {
  response.setHeader('Content-Security-Policy', DEVICE_PAGE_CSP);
  response.setHeader('X-Content-Type-Options', 'nosniff');
  response.setHeader('Referrer-Policy', 'no-referrer');
  response.status(200).type(contentType).send(body);
}
