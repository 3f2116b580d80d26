import { Controller, Get, Headers, Param, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { RequirePermission } from '../common/access-decorators';
import { ApiAuth } from '../common/openapi';
import { EventStreams, KEEP_ALIVE_MS, KEEP_ALIVE_SECONDS_RANGE, STREAM_PERMISSION, type StreamSink } from './event-streams';
import { ApiRoute } from '../common/api-route';

/**
 * `GET /memberships/{m}/events/stream`: the live event stream (Server-Sent Events). Its own
 * controller, registered before EventsController, so that `stream` is not taken for an event id.
 */
@ApiTags('events')
@ApiAuth()
@Controller('memberships/:membershipId/events')
export class EventStreamController {
  constructor(private readonly streams: EventStreams) {}

  @Get('stream')
  @RequirePermission(STREAM_PERMISSION)
  @ApiRoute({
    summary: 'Follow the event log live (Server-Sent Events)',
    description:
      'Each event committed in the membership, once, in commit order, from whichever instance recorded it: `id: <cursor>`, ' +
      '`event: <event_type>`, `data: <the event as GET .../events/{id} shows it>`. Resume with the `Last-Event-ID` header or ' +
      '`?after=` (a cursor, or an event id): every event committed after it arrives exactly once. Without either, the stream ' +
      'starts now. A comment line every 15 s keeps the connection alive; `?keep_alive=<seconds>` (1 to 15) asks for one that ' +
      'often instead, so that a client can tell a silently cut connection from an idle one sooner. The stream ends when the credential is revoked or ' +
      'rotated (a Bearer token\'s session revoked or its token expired; the application updated or deleted) or the caller\'s ' +
      'access may have changed (the user or its role updated or deleted): reconnect with Last-Event-ID. At most ' +
      'EVENT_STREAMS_PER_MEMBERSHIP (100) open streams per membership on an instance.',
    headers: [{ name: 'Last-Event-ID', required: false, schema: { type: 'string' }, description: 'Resume after this cursor; wins over `after`' }],
    query: [
      { name: 'after', required: false, type: String, description: 'Resume after this cursor (an `id:` of this stream) or event id' },
      { name: 'types', required: false, type: String, description: 'Comma-separated event types to receive (an unknown type is a 400)', example: 'TokenRevoked,UserUpdated' },
      {
        name: 'keep_alive',
        required: false,
        schema: { type: 'integer', minimum: KEEP_ALIVE_SECONDS_RANGE.min, maximum: KEEP_ALIVE_SECONDS_RANGE.max, default: KEEP_ALIVE_MS / 1000 },
        description: 'Seconds between the comment lines an idle stream writes (anything else is a 400)',
      },
    ],
    answers: [
      {
        status: 200,
        description: 'An endless text/event-stream',
        content: {
          'text/event-stream': {
            schema: { type: 'string' },
            example: 'id: 7391.0b7f1c2e-3d4a-4c8e-9f1a-2b3c4d5e6f70\nevent: UserUpdated\ndata: {"_id":"0b7f1c2e-3d4a-4c8e-9f1a-2b3c4d5e6f70","event_type":"UserUpdated",...}\n\n',
          },
        },
      },
    ],
    errors: [400, 403, 404],
    errorExamples: {
      429: {
        description: 'TooManyStreams: the membership has EVENT_STREAMS_PER_MEMBERSHIP streams open (Retry-After, seconds)',
        errorCode: 'TooManyStreams',
        message: 'At most 100 event streams of a membership may be open at once',
      },
    },
  })
  async stream(
    @Param('membershipId') membershipId: string,
    @Query('types') types: unknown,
    @Query('after') after: unknown,
    @Query('keep_alive') keepAlive: unknown,
    @Headers('last-event-id') lastEventId: unknown,
    @Headers('authorization') authorization: unknown,
    @Res() response: Response,
  ): Promise<void> {
    await this.streams.openStream(authorization, membershipId, { types, after, lastEventId, keepAlive }, sseSink(response));
  }
}

/**
 * The HTTP side of a stream: headers on the first write, then text as it comes. Whether the
 * client is gone is tracked from the start (and read from the response when the sink is made), so
 * a client that leaves while the stream is being opened (its token, permission and cursor looked
 * up) still ends it.
 */
function sseSink(response: Response): StreamSink {
  let started = false;
  // The client may be gone already (it left while the guard checked its token): 'close' has fired then.
  let closed = response.destroyed || response.socket === null || response.socket.destroyed;
  const closeListeners = new Set<() => void>();
  response.once('close', () => {
    closed = true;
    for (const listener of closeListeners) listener();
    closeListeners.clear();
  });
  const start = () => {
    started = true;
    response.status(200);
    response.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    response.setHeader('Cache-Control', 'no-store');
    // Proxies that buffer (nginx) must pass each event on at once.
    response.setHeader('X-Accel-Buffering', 'no');
    response.flushHeaders();
    // Small writes go out at once rather than after Nagle's delay.
    response.socket?.setNoDelay(true);
  };
  return {
    write: (text) => {
      if (closed) return true;
      if (!started) start();
      return response.write(text);
    },
    backedUp: () => !closed && response.writableNeedDrain,
    // Whichever of 'drain' and 'close' comes first ends the wait and takes the other listener
    // away: a long stream behind a slow reader waits many times, and each wait left both behind.
    drained: () =>
      new Promise<void>((resolve) => {
        if (closed) return resolve();
        const done = () => {
          response.off('drain', done);
          closeListeners.delete(done);
          resolve();
        };
        response.once('drain', done);
        closeListeners.add(done);
      }),
    end: () => {
      if (!response.writableEnded) response.end();
    },
    onClose: (listener) => {
      if (closed) queueMicrotask(listener);
      else closeListeners.add(listener);
    },
  };
}
