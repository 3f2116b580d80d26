import type { Request } from 'express';

/**
 * The client's address for sign-in defenses: Express's `request.ip` (the socket's, or
 * X-Forwarded-For's as far as `trust proxy` allows); never the X-IpAddress header.
 */
export function clientAddress(request: Request): string {
  return request.ip ?? request.socket.remoteAddress ?? '';
}
