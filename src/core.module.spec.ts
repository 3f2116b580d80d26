import type { DynamicModule, Provider } from '@nestjs/common';
import { APP_GUARD, APP_INTERCEPTOR } from '@nestjs/core';
import { ClsModule } from 'nestjs-cls';
import { withoutGlobalEnhancers } from './core.module';

/** Every provider of a dynamic module and of the dynamic modules it imports. */
function providersOf(module: DynamicModule): Provider[] {
  const imported = (module.imports ?? []).filter((entry): entry is DynamicModule => typeof entry === 'object' && 'module' in entry);
  return [...(module.providers ?? []), ...imported.flatMap(providersOf)];
}

const enhancerTokens = (module: DynamicModule): unknown[] =>
  providersOf(module)
    .map((provider) => (typeof provider === 'object' && 'provide' in provider ? provider.provide : undefined))
    .filter((token) => token === APP_GUARD || token === APP_INTERCEPTOR);

describe('withoutGlobalEnhancers', () => {
  it('leaves the CLS module no global guard or interceptor, and everything else it provides', () => {
    const cls = ClsModule.forRoot({ global: true });
    // If nestjs-cls stops registering them (or moves them), this says the filter has nothing left to do.
    expect(enhancerTokens(cls)).toEqual([APP_GUARD, APP_INTERCEPTOR]);
    const stripped = withoutGlobalEnhancers(cls);
    expect(enhancerTokens(stripped)).toEqual([]);
    expect(providersOf(stripped)).toHaveLength(providersOf(cls).length - 2);
    expect(stripped.global).toBe(true);
  });
});
