import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
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
