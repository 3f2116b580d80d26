import { Controller, Get, Header, Inject, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { HealthIndicatorService } from '@nestjs/terminus';
import type { Response } from 'express';
import type { Logger } from 'pino';
import { Public } from '../common/access-decorators';
import { LOGGER } from '../common/logger';
import { DATABASE, type Database } from '../database/database';
import { SetupService } from '../setup/setup.service';
import { ApiRoute } from '../common/api-route';
import { HealthStatusSchema } from './health.schemas';

const DATABASE_CHECK_TIMEOUT_MS = 3_000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

@ApiTags('operations')
@Controller()
export class HealthController {
  constructor(
    private readonly indicators: HealthIndicatorService,
    @Inject(DATABASE) private readonly database: Database,
    private readonly setup: SetupService,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Liveness: answers without touching the database. */
  @Get('ping')
  @Public()
  @Header('Content-Type', 'text/plain; charset=utf-8')
  @Header('Cache-Control', 'no-store')
  @ApiRoute({
    summary: 'Liveness probe: answers Pong without touching the database',
    produces: ['text/plain'],
    answers: [{ status: 200, description: 'Pong', schema: { type: 'string', example: 'Pong' } }],
  })
  ping(): string {
    return 'Pong';
  }

  /** Readiness: the database answers and the installation is set up. Failure details go to the log only. */
  @Get('healthcheck')
  @Public()
  @Header('Cache-Control', 'no-store')
  @ApiRoute({
    summary: 'Readiness probe: the database answers and the installation is set up',
    description: 'Healthy; or Unhealthy with a message (200 when not set up yet, 500 when the database is unreachable).',
    answers: [
      { status: 200, description: 'Healthy, or Unhealthy because the installation is not set up yet', type: HealthStatusSchema },
      { status: 500, description: 'Unhealthy: the database is unreachable (details only in the log)', type: HealthStatusSchema },
    ],
  })
  async healthcheck(@Res({ passthrough: true }) response: Response): Promise<{ status: string; message?: string }> {
    const indicator = this.indicators.check('database');
    let setUp: boolean;
    try {
      await withTimeout(this.database.ping(), DATABASE_CHECK_TIMEOUT_MS);
      setUp = await withTimeout(this.setup.isSetUp(), DATABASE_CHECK_TIMEOUT_MS);
      indicator.up();
    } catch (error) {
      indicator.down();
      this.logger.error({ err: error }, 'health check: the database is unreachable');
      response.status(500);
      return { status: 'Unhealthy', message: 'The database is unreachable' };
    }
    if (!setUp) return { status: 'Unhealthy', message: 'The installation has not been set up yet' };
    return { status: 'Healthy' };
  }
}
