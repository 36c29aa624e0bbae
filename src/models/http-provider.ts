import type { ModelEntry } from "../config/schema.js";
import type { ModelDelta, ModelProvider, ModelRequest, ModelResponse } from "./provider.js";
import {
  DEFAULT_MAX_DURATION_MS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  ModelTransport,
  type TransportOptions,
  type WireRequest,
  buildHeaders,
  secretsOf,
} from "./transport.js";

/**
 * What every HTTP adapter shares: one endpoint under the entry's `api_base`
 * (or the provider's default), the shared transport (timeouts, retries,
 * classified errors), and streaming unless the entry says `"stream": false`.
 * An adapter only says how a request looks on its wire.
 */
export abstract class HttpModelProvider<E extends ModelEntry = ModelEntry> implements ModelProvider {
  readonly name: string;
  readonly vision: boolean;
  protected readonly url: string;
  protected readonly stream: boolean;
  /** What every request of the entry carries, made once: JSON in, the answer streamed or whole, who asks, the adapter's own (its key), then custom_headers. */
  protected readonly headers: Readonly<Record<string, string>>;
  private readonly transport: ModelTransport;

  protected constructor(
    protected readonly entry: E,
    opts: TransportOptions,
    endpoint: { defaultBase: string; path: string; headers: Record<string, string> },
  ) {
    this.name = entry.model_name;
    this.vision = entry.vision !== false;
    this.url = `${(entry.api_base ?? endpoint.defaultBase).replace(/\/+$/, "")}${endpoint.path}`;
    this.stream = entry.stream !== false;
    // fetch sent `user-agent: node`; custom_headers may replace ours.
    const base = { "content-type": "application/json", accept: this.stream ? "text/event-stream" : "application/json", "user-agent": "picoclaw-ts" };
    this.headers = Object.freeze(buildHeaders({ ...base, ...endpoint.headers }, entry.custom_headers));
    const timeouts = { idleMs: entry.request_timeout ?? DEFAULT_REQUEST_TIMEOUT_MS, maxDurationMs: entry.max_duration ?? DEFAULT_MAX_DURATION_MS };
    this.transport = new ModelTransport(this.name, timeouts, [...secretsOf(entry), ...(opts.secrets ?? [])], opts);
  }

  chat(request: ModelRequest, onDelta?: (delta: ModelDelta) => void): Promise<ModelResponse> {
    return this.transport.send(this.wire(request), request.signal, onDelta);
  }

  /** The request exactly as it goes on the wire. */
  abstract wire(request: ModelRequest): WireRequest;
}
