import { type DynamicModule, Module, type Type } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import type { Logger } from 'pino';
import type { AppConfig } from './config/config';
import { CoreModule } from './core.module';
import { DeviceCodesModule } from './device-codes/device-codes.module';
import { TokenCodePoliciesModule } from './token-code-policies/token-code-policies.module';
import { EventLogModule } from './event-log/event-log.module';
import { QueueModule } from './queue/queue.module';
import { WebhooksModule } from './webhooks/webhooks.module';
import { ProvidersModule } from './providers/providers.module';
import { MailModule } from './mail/mail.module';
import { AllErrorsFilter } from './common/exception.filter';
import { createValidationPipe } from './common/validation';
import { ApplicationsModule } from './applications/applications.module';
import { AccessModule } from './access/access.module';
import { HealthModule } from './health/health.module';
import { MembershipsModule } from './membership-admin/memberships.module';
import { MetricsModule } from './metrics/metrics.module';
import { RolesModule } from './roles/roles.module';
import { SetupModule } from './setup/setup.module';
import { TokensModule } from './tokens/tokens.module';
import { UsersModule } from './users/users.module';
import { RecoveryModule } from './recovery/recovery.module';
import { SignInModule } from './sign-in/sign-in.module';
import { SecondFactorsModule } from './second-factors/second-factors.module';
import { OidcModule } from './oidc/oidc.module';

@Module({})
export class AppModule {
  /** `testModules`: modules an e2e test adds (test-only routes); the service itself passes none. */
  static forRoot(config: AppConfig, logger: Logger, testModules: Type[] = []): DynamicModule {
    return {
      module: AppModule,
      imports: [
        CoreModule.forRoot(config, logger),
        QueueModule,
        MetricsModule,
        // Express tries routes in the order they were registered, which is the order Nest first
        // meets their modules in: the token routes (sign-in, refresh, verify, /me), the permission
        // check and the event log, the most called, are found after a few of them, not after fifty
        // to ninety (each miss is a path match for every request: 15 µs of an events _query).
        TokensModule,
        RolesModule,
        EventLogModule,
        AccessModule,
        MembershipsModule,
        UsersModule,
        ApplicationsModule,
        SetupModule,
        HealthModule,
        WebhooksModule,
        ProvidersModule,
        MailModule,
        TokenCodePoliciesModule,
        DeviceCodesModule,
        RecoveryModule,
        SignInModule,
        SecondFactorsModule,
        OidcModule,
        ...testModules,
      ],
      providers: [
        { provide: APP_FILTER, useClass: AllErrorsFilter },
        { provide: APP_PIPE, useFactory: createValidationPipe },
      ],
    };
  }
}
