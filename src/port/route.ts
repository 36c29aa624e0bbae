/**
 * An HTTP route a feature adds to the gateway, without knowing the HTTP
 * framework: the gateway mounts it behind its checks (Host and Origin,
 * the bearer token, the body's size) and its error mapping. A handler
 * throws the project's errors (a `RequestError` with its code); the
 * gateway turns codes into statuses.
 *
 * Under `/v1/` a route is part of the JSON API: behind the token, and a
 * body must be JSON (`Content-Type: application/json`). Elsewhere
 * (`/metrics`, `/hooks/telegram`) a route says how it is read: `body: "raw"`
 * takes any content type and hands over the bytes as sent (a webhook
 * checks its signature over them), and `auth: "none"` leaves the caller's
 * check to the route (a webhook's own secret).
 */

export type RouteMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

export interface RouteRequest {
  method: RouteMethod;
  /** The path's `:name` parts. A `:key` part has been checked to be a session key. */
  params: Readonly<Record<string, string>>;
  query(name: string): string | undefined;
  /** A request header (any case), or undefined. */
  header(name: string): string | undefined;
  /** The body parsed as JSON (`body: "json"`, the default); `400 invalid_json` was answered already when it is not JSON. Undefined without a body. */
  json: unknown;
  /** The body's bytes as sent (`body: "raw"`); empty without a body. */
  raw: Uint8Array;
  signal: AbortSignal;
}

/** A JSON value, JSON text written as it is (when its key order is part of the contract), or any other body with its type. */
export type RouteAnswer =
  | { json: unknown; status?: number }
  | { jsonText: string; status?: number }
  | { body: string | Uint8Array; contentType: string; status?: number; headers?: Readonly<Record<string, string>> };

export interface FeatureRoute {
  method: RouteMethod;
  /** Under the gateway's root, with `:name` parts: `/v1/sessions/:key/todos`, `/metrics`. */
  path: string;
  /** How a body is read: `"json"` (the default; the only kind under `/v1/`) or `"raw"` (outside `/v1/` only). */
  body?: "json" | "raw";
  /** `"token"` (the default): behind gateway.token when one is set. `"none"` (outside `/v1/` only): the route checks its caller itself. */
  auth?: "token" | "none";
  handle(request: RouteRequest): RouteAnswer | Promise<RouteAnswer>;
}
