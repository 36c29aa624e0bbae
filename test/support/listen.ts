import type { Server } from "node:http";
import { type AddressInfo, createServer } from "node:net";
import { onTestFinished } from "vitest";

/** Listens on a free port of 127.0.0.1 until the test ends (then every connection is cut); resolves with its origin. */
export async function listenForTest(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  onTestFinished(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A port of 127.0.0.1 nothing listens on now (for a process told to listen there, or a connection that must be refused). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
