import { EventSourceParserStream } from "eventsource-parser/stream";

/** Where the token is kept: this tab's session storage, never a cookie, never the URL. */
const TOKEN_KEY = "picoclaw.token";

/** An answer that was not 2xx, with the gateway's `{"error":{"code","message"}}`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Asks the person for the token (`wrong`: the last one was refused); resolves with the new one. */
export type TokenPrompt = (wrong: boolean) => Promise<string>;

export async function errorOf(res: Response): Promise<ApiError> {
  try {
    const body = (await res.json()) as { error?: { code?: unknown; message?: unknown } };
    return new ApiError(res.status, String(body.error?.code ?? "error"), String(body.error?.message ?? res.statusText));
  } catch {
    return new ApiError(res.status, "error", `${res.status} ${res.statusText}`);
  }
}

/**
 * The gateway's HTTP API, from the page: paths relative to the page (so it
 * works under a reverse proxy's prefix too), the token as `Authorization:
 * Bearer` once the gateway asked for it (401), JSON in and out.
 */
export class Api {
  private token = sessionStorage.getItem(TOKEN_KEY) ?? "";
  private asking: Promise<void> | undefined;

  constructor(private readonly prompt: TokenPrompt) {}

  /** Any request; a 401 asks for the token (once for every request waiting on it) and sends the request again. */
  async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    for (;;) {
      const sent = this.token;
      const headers = new Headers(init.headers);
      if (sent !== "") headers.set("authorization", `Bearer ${sent}`);
      const res = await fetch(new URL(path, document.baseURI), { ...init, headers });
      if (res.status !== 401) return res;
      await res.body?.cancel();
      if (this.token === sent) await this.askToken(sent !== "");
    }
  }

  async json<T>(path: string, init: RequestInit = {}): Promise<T> {
    const res = await this.fetch(path, init);
    if (!res.ok) throw await errorOf(res);
    return (await res.json()) as T;
  }

  /** A POST of a JSON body. */
  post(path: string, body: unknown, signal?: AbortSignal): Promise<Response> {
    return this.fetch(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), ...(signal ? { signal } : {}) });
  }

  private askToken(wrong: boolean): Promise<void> {
    this.asking ??= this.prompt(wrong)
      .then((token) => {
        this.token = token;
        sessionStorage.setItem(TOKEN_KEY, token);
      })
      .finally(() => {
        this.asking = undefined;
      });
    return this.asking;
  }
}

/** Reads a `text/event-stream` answer, calling `on` with each event's name and JSON data, until it ends. */
export async function readEvents(res: Response, on: (event: string, data: unknown) => void): Promise<void> {
  if (!res.body) return;
  const reader = res.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream()).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    let data: unknown;
    try {
      data = JSON.parse(value.data);
    } catch {
      continue;
    }
    on(value.event ?? "message", data);
  }
}
