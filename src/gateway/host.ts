import type { MiddlewareHandler } from "hono";
import { refuse } from "./refusal.js";

/** A host the gateway answers to: a name or address, on any port or on one. */
interface HostRule {
  hostname: string;
  port: number | undefined;
}

/**
 * A host entry (`myhost.lan`, `myhost.lan:18790`, `192.168.1.5`, `[fd00::1]:8080`)
 * as a rule; undefined when it is not one (a path, credentials, a scheme, a bare IPv6 address).
 */
export function hostRule(entry: string): HostRule | undefined {
  if (!/^[^\s/\\?#@]+$/.test(entry) || !URL.canParse(`http://${entry}`)) return undefined;
  const explicit = /:(\d+)$/.exec(entry);
  return { hostname: new URL(`http://${entry}`).hostname, port: explicit ? Number(explicit[1]) : undefined };
}

/** Names and addresses that reach this machine only, whatever DNS says: `localhost`, 127.x.y.z, `[::1]`. */
export function isLoopbackHostname(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

/**
 * While no token is set, only requests to a loopback Host or a listed one
 * are answered; any other is `403 forbidden_host`. A web page can point a
 * DNS name of its own at 127.0.0.1 (DNS rebinding) and then call the
 * gateway as if it were its own origin; the Host header still names the
 * page's domain, and that is what this refuses. With a token the token
 * protects every route, and any Host is answered.
 */
export function hostGuard(allowedHosts: readonly string[]): MiddlewareHandler {
  const rules = allowedHosts.map((entry) => {
    const rule = hostRule(entry);
    if (rule === undefined) throw new TypeError(`allowed host ${JSON.stringify(entry)} is not a host (expected a name or address, optionally with :port)`);
    return rule;
  });
  const accepted = (host: string, protocol: string): boolean => {
    if (!/^[^\s/\\?#@]+$/.test(host) || !URL.canParse(`${protocol}//${host}`)) return false;
    const url = new URL(`${protocol}//${host}`);
    if (isLoopbackHostname(url.hostname)) return true;
    const port = url.port === "" ? (protocol === "https:" ? 443 : 80) : Number(url.port);
    return rules.some((rule) => rule.hostname === url.hostname && (rule.port === undefined || rule.port === port));
  };
  return async (c, next) => {
    const url = new URL(c.req.url);
    const header = c.req.header("host");
    // The Host header, and the URL's host too when a request names both (an absolute request target).
    for (const host of header === undefined ? [url.host] : [header, url.host]) {
      if (!accepted(host, url.protocol)) {
        return refuse(
          c,
          403,
          "forbidden_host",
          `Host ${JSON.stringify(host.slice(0, 200))} is refused: with no gateway.token set, only localhost, 127.x.y.z, [::1] and gateway.allowed_hosts are answered`,
        );
      }
    }
    return next();
  };
}
