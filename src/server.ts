import { ConfigError, loadConfig } from './config/config';
import { createApp } from './bootstrap';
import { createLogger } from './common/logger';
import { describeTarget } from './database/describe';

export async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger(config.logLevel);
  const { app } = await createApp(config, logger);
  app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
  await app.listen(config.port, config.host);
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const shownHost = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  logger.info(
    { url: `http://${shownHost}:${port}`, database: describeTarget(config.database), environment: config.nodeEnv },
    `Portcullis listening on http://${shownHost}:${port}`,
  );
}
