import http from "node:http";
import https from "node:https";

/**
 * How the REST client's requests go out: Node's own http(s) with an agent
 * of the bot's own, which keeps connections alive and which `dispose`
 * closes (the library's default, undici's global pool, would keep them
 * open past the bot). An answer is read whole, at most MAX_ANSWER_BYTES
 * (Discord's answers to what the bot asks are small).
 */

export const MAX_ANSWER_BYTES = 1024 * 1024;

export interface Transport {
  makeRequest(url: string, init: RequestInit): Promise<Response>;
  dispose(): void;
}

export function nodeTransport(apiRoot: string): Transport {
  const agent = apiRoot.startsWith("https:") ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });
  const makeRequest = (url: string, init: RequestInit): Promise<Response> => {
    const body = init.body;
    if (body != null && typeof body !== "string" && !(body instanceof Uint8Array)) {
      return Promise.reject(new Error("the Discord channel sends no files"));
    }
    const target = new URL(url);
    const client = target.protocol === "https:" ? https : http;
    const headers = new Headers(init.headers);
    if (body != null) headers.set("content-length", String(Buffer.byteLength(body)));
    return new Promise((resolve, reject) => {
      const request = client.request(
        target,
        { method: init.method ?? "GET", headers: Object.fromEntries(headers), agent, ...(init.signal ? { signal: init.signal } : {}) },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on("data", (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_ANSWER_BYTES) res.destroy(new Error(`Discord's answer is over ${MAX_ANSWER_BYTES} bytes`));
            else chunks.push(chunk);
          });
          res.on("error", reject);
          res.on("end", () => {
            const status = res.statusCode ?? 500;
            const answer = [204, 205, 304].includes(status) ? null : Buffer.concat(chunks);
            const answerHeaders = new Headers();
            for (const [name, value] of Object.entries(res.headers)) {
              if (value !== undefined) answerHeaders.set(name, Array.isArray(value) ? value.join(", ") : value);
            }
            resolve(new Response(answer, { status, statusText: res.statusMessage ?? "", headers: answerHeaders }));
          });
        },
      );
      request.on("error", reject);
      request.end(body ?? undefined);
    });
  };
  return { makeRequest, dispose: () => agent.destroy() };
}
