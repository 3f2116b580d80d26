import { type ArgumentsHost, Catch, type ExceptionFilter, Inject } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import { LOGGER } from './logger';
import { sendError } from './http';

/** Every error thrown inside Nest (guards, pipes, handlers) leaves through here. */
@Catch()
export class AllErrorsFilter implements ExceptionFilter {
  constructor(@Inject(LOGGER) private readonly logger: Logger) {}

  catch(error: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    sendError(http.getRequest<Request>(), http.getResponse<Response>(), error, this.logger);
  }
}
