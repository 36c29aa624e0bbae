/**
 * An HTTP route a feature adds to the gateway, without knowing the HTTP
 * framework: the gateway mounts it behind its auth, limits and error
 * mapping. A handler throws the project's errors (a `RequestError` with its
 * code); the gateway turns codes into statuses.
 */

export interface RouteRequest {
  /** The path's `:name` parts. A `:key` part has been checked to be a session key. */
  params: Readonly<Record<string, string>>;
  query(name: string): string | undefined;
  signal: AbortSignal;
}

/** A JSON value, or JSON text written as it is (when its key order is part of the contract). */
export type RouteAnswer = { json: unknown } | { jsonText: string };

export interface FeatureRoute {
  method: "GET";
  /** Under the gateway's root, with `:name` parts: `/v1/sessions/:key/todos`. */
  path: string;
  handle(request: RouteRequest): RouteAnswer | Promise<RouteAnswer>;
}
