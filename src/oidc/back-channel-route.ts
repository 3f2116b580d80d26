import { applyDecorators, createParamDecorator, type ExecutionContext, HttpCode, Post, type Type } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiOperation, ApiResponse } from '@nestjs/swagger';
import type { Request } from 'express';
import { clientAddressOf, Public } from '../common/access-decorators';
import { OAuthErrorDto } from './oauth-docs';
import type { ClientAuthRequest } from './oidc-clients';

/** What a back-channel route hands its service: the client's credentials and form, and where the request came from. */
export interface BackChannelRequest extends ClientAuthRequest {
  /** The socket's address (TRUST_PROXY), for the sign-in defenses. */
  clientAddress: string;
  userAgent: string | undefined;
}

/** The request of a back-channel route as one handler parameter (every such route reads the same four things). */
export const ClientRequest = createParamDecorator((_data: unknown, context: ExecutionContext): BackChannelRequest => {
  const request = context.switchToHttp().getRequest<Request>();
  const form: unknown = request.body;
  return {
    authorization: request.headers.authorization,
    form: form && typeof form === 'object' ? (form as Record<string, unknown>) : {},
    clientAddress: clientAddressOf(request),
    userAgent: request.headers['user-agent'],
  };
});

export interface BackChannelRouteDocs {
  path: string;
  summary: string;
  description: string;
  form: Type<unknown>;
  answer: { description: string; type: Type<unknown> };
  /** The OAuth errors of its 400. */
  errors: string;
}

/**
 * A back-channel route of the issuer (token, device/authorize, introspect, revoke): a public POST
 * answering 200, whose client authenticates itself in the request (RFC 6749 2.3), with a
 * form-encoded body and OAuth's error objects, as the document describes it.
 */
export function BackChannelRoute(docs: BackChannelRouteDocs): MethodDecorator {
  return applyDecorators(
    Post(docs.path),
    Public(),
    HttpCode(200),
    ApiOperation({ summary: docs.summary, description: docs.description }),
    ApiConsumes('application/x-www-form-urlencoded'),
    ApiBody({ type: docs.form }),
    ApiResponse({ status: 200, description: docs.answer.description, type: docs.answer.type }),
    ApiResponse({ status: 400, description: docs.errors, type: OAuthErrorDto }),
    ApiResponse({ status: 401, description: 'invalid_client', type: OAuthErrorDto }),
  );
}
