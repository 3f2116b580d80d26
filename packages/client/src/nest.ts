/**
 * NestJS adapter: decorators that declare how an endpoint is protected, and a guard that enforces
 * them with a {@link PortcullisClient}. Express platform (`@nestjs/platform-express`).
 */
import {
  type CanActivate,
  createParamDecorator,
  type DynamicModule,
  type ExecutionContext,
  HttpException,
  Inject,
  Injectable,
  Logger,
  Module,
  type OnModuleDestroy,
  Optional,
  type Provider,
} from '@nestjs/common';
import { APP_GUARD, Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import {
  type AuthorizationOutcome,
  type EndpointMode,
  type EndpointRule,
  type PortcullisPrincipal,
  PortcullisClient,
} from './client';
import { type AuthorizationDenied, inDevelopment, PortcullisConfigError } from './errors';
import {
  type CompiledPermission,
  compilePermission,
  type PermissionTemplate,
  SEGMENT_NAMES,
} from './expression';
import { attachPrincipal, principalOf, toProtectedRequest } from './request';
import type { PortcullisSettings } from './settings';

/** Metadata key of the protection declared on a controller or a handler. */
export const PORTCULLIS_METADATA = 'portcullis:endpoint';

/** What the decorators record on one level (controller or handler). */
export interface EndpointMetadata {
  mode?: EndpointMode;
  permission?: Readonly<PermissionTemplate>;
}

/** A decorator usable on a controller class or on a handler. */
export type PortcullisDecorator = ClassDecorator & MethodDecorator;

function locationOf(target: object, key: string | symbol | undefined): string {
  const owner = typeof target === 'function' ? target.name : target.constructor.name;
  return key === undefined ? owner : `${owner}.${String(key)}`;
}

function declare(decorator: string, update: EndpointMetadata): PortcullisDecorator {
  // Fail at decoration time for a permission that can never work (bad literal, subject from
  // query or header, ...).
  if (update.permission !== undefined) compilePermission(update.permission);
  return (target: object, key?: string | symbol, descriptor?: PropertyDescriptor): void => {
    const holder: unknown = descriptor === undefined ? target : descriptor.value;
    if (typeof holder !== 'function') {
      throw new PortcullisConfigError(`@${decorator}() applies to a controller class or a handler method.`);
    }
    const where = locationOf(target, key);
    const current = Reflect.getOwnMetadata(PORTCULLIS_METADATA, holder) as EndpointMetadata | undefined;
    const next: EndpointMetadata = { ...current };
    if (update.mode !== undefined) {
      if (current?.mode !== undefined) {
        throw new PortcullisConfigError(
          `${where}: @${decorator}() conflicts with the ${current.mode} mode already declared at the same level.`,
        );
      }
      next.mode = update.mode;
    }
    if (update.permission !== undefined) {
      const merged: PermissionTemplate = { ...current?.permission };
      for (const segment of SEGMENT_NAMES) {
        const value = update.permission[segment];
        if (value === undefined) continue;
        if (merged[segment] !== undefined) {
          throw new PortcullisConfigError(
            `${where}: the permission ${segment} is declared twice at the same level.`,
          );
        }
        merged[segment] = value;
      }
      next.permission = Object.freeze(merged);
    }
    Reflect.defineMetadata(PORTCULLIS_METADATA, Object.freeze(next), holder);
  };
}

/**
 * Token and permission required. `permission` sets segments of the expression (absent ones take
 * their defaults or come from {@link Permission} / the controller).
 */
export function Authorized(permission?: PermissionTemplate): PortcullisDecorator {
  return declare('Authorized', permission === undefined
    ? { mode: 'authorized' }
    : { mode: 'authorized', permission });
}

/** Token required; the handler checks permissions itself (`request.portcullis` holds the caller). */
export function SelfAuthorized(): PortcullisDecorator {
  return declare('SelfAuthorized', { mode: 'self-authorized' });
}

/** Public endpoint (the default for an endpoint without any of these decorators). */
export function Unauthorized(): PortcullisDecorator {
  return declare('Unauthorized', { mode: 'unauthorized' });
}

/**
 * Segments of the permission expression, without choosing a mode: they take effect only where
 * the endpoint is {@link Authorized}.
 */
export function Permission(permission: PermissionTemplate): PortcullisDecorator {
  return declare('Permission', { permission });
}

const resolved = new WeakMap<object, WeakMap<object, EndpointRule>>();

function metadataOf(reflector: Reflector, holder: object): EndpointMetadata | undefined {
  // Reflector.get reads Reflect.getMetadata, so a controller inherits its parent class's
  // declaration unless it declares its own. Reflector types its target as a function; handlers
  // and controllers are functions.
  return reflector.get<EndpointMetadata | undefined>(PORTCULLIS_METADATA, holder as () => void);
}

/**
 * The effective rule of a handler: the handler's mode if it declares one, else the controller's,
 * else public. Permission segments merge segment by segment, the handler's over the
 * controller's. Resolved once per handler and controller.
 */
export function resolveEndpointRule(
  handler: object,
  controller: object,
  reflector: Reflector = new Reflector(),
): EndpointRule {
  let byController = resolved.get(handler);
  if (byController === undefined) {
    byController = new WeakMap<object, EndpointRule>();
    resolved.set(handler, byController);
  }
  const known = byController.get(controller);
  if (known !== undefined) return known;

  const onController = metadataOf(reflector, controller);
  const onHandler = metadataOf(reflector, handler);
  const mode = onHandler?.mode ?? onController?.mode;
  let rule: EndpointRule;
  if (mode === 'authorized') {
    const permission: CompiledPermission = compilePermission({
      ...onController?.permission,
      ...onHandler?.permission,
    });
    rule = { mode, permission };
  } else if (mode === 'self-authorized') {
    rule = { mode };
  } else {
    rule = { mode: 'unauthorized' };
  }
  byController.set(controller, rule);
  return rule;
}

/** The exception the guard throws on a deny: its response is the exact error body. */
export class PortcullisDeniedException extends HttpException {
  readonly headers: Readonly<Record<string, string>>;

  constructor(readonly outcome: AuthorizationDenied) {
    super({ ...outcome.body }, outcome.status);
    this.headers = outcome.headers;
  }
}

/**
 * Enforces the decorators. Use it globally (`PortcullisModule.forRoot(settings)` registers it as
 * APP_GUARD) or locally (`@UseGuards(PortcullisGuard)`), or build it yourself:
 * `new PortcullisGuard(client, reflector)`.
 */
@Injectable()
export class PortcullisGuard implements CanActivate {
  private readonly logger = new Logger('Portcullis');
  private readonly reflector: Reflector;

  constructor(
    @Inject(PortcullisClient) private readonly client: PortcullisClient,
    @Optional() @Inject(Reflector) reflector?: Reflector,
  ) {
    this.reflector = reflector ?? new Reflector();
  }

  /** A decision the cache gave at once returns at once: no promise on a cached route. */
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const rule = resolveEndpointRule(context.getHandler(), context.getClass(), this.reflector);
    if (rule.mode === 'unauthorized') return true;
    if (context.getType() !== 'http') {
      throw new PortcullisConfigError('PortcullisGuard protects HTTP endpoints only.');
    }
    const decided = this.client.decide(toProtectedRequest(context.switchToHttp().getRequest<Request>()), rule);
    return decided instanceof Promise ? decided.then((outcome) => this.answer(outcome, context)) : this.answer(decided, context);
  }

  /** True for an allowed request (its caller attached); otherwise the refusal, thrown. */
  private answer(outcome: AuthorizationOutcome, context: ExecutionContext): true {
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    if (outcome.allowed) {
      attachPrincipal(request, outcome.principal);
      return true;
    }
    if (outcome.status === 503) {
      this.logger.warn(`Identity service unavailable: ${outcome.detail ?? 'no detail'}`);
    } else if (outcome.required !== undefined && inDevelopment()) {
      // The developer of the protected API sees which grant is missing.
      this.logger.warn(`403 ${request.method} ${request.originalUrl}: the caller needs ${outcome.required}`);
    }
    const response = http.getResponse<Response>();
    for (const [name, value] of Object.entries(outcome.headers)) response.setHeader(name, value);
    throw new PortcullisDeniedException(outcome);
  }
}

/** Handler parameter: the verified caller (`request.portcullis`), undefined on public endpoints. */
export const PortcullisCaller = createParamDecorator(
  (_data: unknown, context: ExecutionContext): PortcullisPrincipal | undefined =>
    principalOf(context.switchToHttp().getRequest<Request>()),
);

export interface PortcullisModuleOptions {
  /** Register {@link PortcullisGuard} as a global guard (APP_GUARD). Default true. */
  globalGuard?: boolean;
}

/**
 * `PortcullisModule.forRoot(settings)`: provides {@link PortcullisClient} and
 * {@link PortcullisGuard} to the whole application (a global module) and, by default, applies the
 * guard to every route. Undecorated routes stay public.
 */
@Module({})
export class PortcullisModule implements OnModuleDestroy {
  constructor(@Inject(PortcullisClient) private readonly client: PortcullisClient) {}

  static forRoot(
    settings: PortcullisSettings | PortcullisClient,
    options: PortcullisModuleOptions = {},
  ): DynamicModule {
    const client = settings instanceof PortcullisClient ? settings : new PortcullisClient(settings);
    const providers: Provider[] = [
      { provide: PortcullisClient, useValue: client },
      {
        provide: PortcullisGuard,
        useFactory: (c: PortcullisClient, reflector: Reflector) => new PortcullisGuard(c, reflector),
        inject: [PortcullisClient, Reflector],
      },
    ];
    if (options.globalGuard ?? true) providers.push({ provide: APP_GUARD, useExisting: PortcullisGuard });
    return {
      module: PortcullisModule,
      global: true,
      providers,
      exports: [PortcullisClient, PortcullisGuard],
    };
  }

  onModuleDestroy(): void {
    this.client.close();
  }
}
