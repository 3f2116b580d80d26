import * as http from 'node:http';
import * as https from 'node:https';

/** What one GET to the service came to: an HTTP answer, or no usable answer at all. */
export type ServiceAnswer =
  | {
      kind: 'answer';
      status: number;
      /** The parsed JSON body; `undefined` when the body is not JSON. */
      json: unknown;
    }
  | { kind: 'failure'; detail: string };

/** Larger answers are not what the service sends; they are refused as unusable. */
export const MAX_ANSWER_BYTES = 1024 * 1024;

/**
 * Minimal GET-JSON client over node:http(s), with one deadline covering connection, headers and
 * body. It never rejects: network errors, timeouts and oversize answers become `failure`.
 * Redirects are not followed (a 3xx is an answer the caller treats as unusable).
 */
export class ServiceTransport {
  private readonly httpAgent = new http.Agent({ keepAlive: true });
  private readonly httpsAgent = new https.Agent({ keepAlive: true });

  constructor(private readonly timeoutMs: number) {}

  get(url: URL, authorization: string): Promise<ServiceAnswer> {
    return new Promise<ServiceAnswer>((resolve) => {
      let request: http.ClientRequest | undefined;
      let settled = false;
      const timer = setTimeout(() => {
        fail(`no complete answer within ${this.timeoutMs} ms`);
        request?.destroy();
      }, this.timeoutMs);
      const finish = (answer: ServiceAnswer): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(answer);
      };
      const fail = (reason: string): void =>
        finish({ kind: 'failure', detail: `GET ${url.pathname}: ${reason}` });

      const secure = url.protocol === 'https:';
      const options: http.RequestOptions = {
        method: 'GET',
        agent: secure ? this.httpsAgent : this.httpAgent,
        headers: {
          authorization,
          accept: 'application/json',
          'user-agent': 'portcullis-client',
        },
      };
      try {
        request = (secure ? https : http).request(url, options, (response) => {
          const chunks: Buffer[] = [];
          let size = 0;
          response.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_ANSWER_BYTES) {
              fail(`answer larger than ${MAX_ANSWER_BYTES} bytes`);
              response.destroy();
              return;
            }
            chunks.push(chunk);
          });
          response.on('end', () => {
            finish({
              kind: 'answer',
              status: response.statusCode ?? 0,
              json: parseJson(Buffer.concat(chunks).toString('utf8')),
            });
          });
          response.on('error', (error: Error) => fail(error.message));
          response.on('close', () => {
            if (!response.complete) fail('connection closed before the answer was complete');
          });
        });
      } catch (error: unknown) {
        // Synchronous refusals (e.g. a header value Node will not send).
        fail(error instanceof Error ? error.message : String(error));
        return;
      }
      request.on('error', (error: Error) => fail(error.message));
      request.end();
    });
  }

  /** Closes the kept-alive connections to the service. */
  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
