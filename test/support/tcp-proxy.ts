import { createServer, type Server, type Socket, connect } from 'node:net';
import { closedPort } from './ports';

/**
 * A TCP proxy on 127.0.0.1 in front of a real server, which a test can cut and restore to make
 * that server unreachable without stopping it.
 */
export class TcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  /** Listens on `port`, else on the port it had (a restart after `cut`), else on a closed one that the kernel will not hand out meanwhile. */
  async start(port = this.port): Promise<number> {
    const listenOn = port || (await closedPort());
    this.server = createServer((client) => {
      const upstream = connect(this.targetPort, this.targetHost);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => socket.destroy());
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => this.server!.listen(listenOn, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
    return this.port;
  }

  /** Refuses new connections and cuts the open ones. */
  async cut(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }
}
