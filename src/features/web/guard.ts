import { lookup } from "node:dns/promises";
import type { buildConnector } from "undici";
import { type AllowList, parseAddress, refusedAddress } from "./addresses.js";

/**
 * web_fetch's guard against reaching the gateway's own network (SSRF):
 * a check of each URL before anything is sent (scheme, `localhost`, a
 * literal address), and the connector every connection is made by, which
 * resolves the name once, checks every address it got and connects only to
 * those very addresses, so a name that answers a public address to a check
 * and a private one to the connection (DNS rebinding) gets nowhere.
 */

/** A name's addresses, as `dns.lookup(name, {all: true})` gives them; injected by tests. */
export type Resolve = (hostname: string) => Promise<readonly { address: string; family: number }[]>;

export const systemResolve: Resolve = (hostname) => lookup(hostname, { all: true, verbatim: true });

/** A fetch the guard refused: its message is the tool's error result. */
export class FetchRefused extends Error {
  override readonly name = "FetchRefused";
}

/** PicoClaw's words for a host it will not fetch; ours follow them with why, and where the exception goes. */
export const PRIVATE_REFUSAL = "fetching private or local network hosts is not allowed";
const WHERE = "tools.web.allow_hosts lists hosts that may be reached";

const bare = (hostname: string) => (hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname);
const noDot = (hostname: string) => (hostname.endsWith(".") ? hostname.slice(0, -1) : hostname);

export function portOf(url: URL): number {
  return url.port !== "" ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
}

/**
 * The check of a URL before any DNS: http(s) only, a host named, and neither
 * `localhost` (nor a name under it) nor a literal address that is not public,
 * unless the allow lists name it. Undefined when it may be fetched; else the refusal.
 */
export function refusal(url: URL, allow: AllowList): string | undefined {
  if (url.protocol !== "http:" && url.protocol !== "https:") return "only http/https URLs are allowed";
  if (url.hostname === "") return "missing domain in URL";
  const port = portOf(url);
  if (allow.allowsHost(url.hostname, port)) return undefined;
  const name = noDot(url.hostname.toLowerCase());
  if (name === "localhost" || name.endsWith(".localhost")) return `${PRIVATE_REFUSAL}: ${url.hostname} is this machine (${WHERE})`;
  if (parseAddress(name)) {
    const why = refusedAddress(name);
    if (why !== undefined && !allow.allowsAddress(name, port)) return `${PRIVATE_REFUSAL}: ${url.hostname} is ${why} (${WHERE})`;
  }
  return undefined;
}

/** The addresses a connection to `hostname:port` may go to, every one of them checked; a FetchRefused when any is refused. */
export async function checkedAddresses(hostname: string, port: number, allow: AllowList, resolve: Resolve): Promise<string[]> {
  const host = bare(hostname);
  if (parseAddress(host)) {
    const why = refusedAddress(host);
    if (why !== undefined && !allow.allowsAddress(host, port) && !allow.allowsHost(hostname, port)) {
      throw new FetchRefused(`${PRIVATE_REFUSAL}: ${hostname} is ${why} (${WHERE})`);
    }
    return [host];
  }
  let found: readonly { address: string }[];
  try {
    found = await resolve(host);
  } catch (error) {
    throw new FetchRefused(`request failed: ${host} could not be resolved (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  if (found.length === 0) throw new FetchRefused(`request failed: ${host} has no address`);
  const addresses = found.map((entry) => entry.address);
  // A name the operator listed may resolve anywhere (a NAS on the LAN).
  if (allow.allowsHost(host, port)) return addresses;
  for (const address of addresses) {
    const why = refusedAddress(address);
    if (why !== undefined && !allow.allowsAddress(address, port)) {
      throw new FetchRefused(`${PRIVATE_REFUSAL}: ${host} resolves to ${address}, ${why} (${WHERE})`);
    }
  }
  return addresses;
}

type Connector = buildConnector.connector;
type ConnectOptions = buildConnector.Options;

/**
 * undici's connector behind the guard: each connection resolves its host
 * once (`resolve`), checks every address, then hands the plain connector
 * an address to connect to (the first that answers, in the resolver's
 * order), never the name. TLS still checks the certificate against the
 * name (`servername`).
 */
export function guardedConnector(plain: Connector, allow: AllowList, resolve: Resolve): Connector {
  return (options: ConnectOptions, callback) => {
    const port = options.port ? Number(options.port) : options.protocol === "https:" ? 443 : 80;
    checkedAddresses(options.hostname, port, allow, resolve).then(
      (addresses) => {
        const attempt = (index: number) => {
          const address = addresses[index]!;
          plain({ ...options, hostname: address, servername: options.servername ?? serverName(options.hostname) }, (error, socket) => {
            if (error && index + 1 < addresses.length) attempt(index + 1);
            else if (error) callback(error, null);
            else callback(null, socket!);
          });
        };
        attempt(0);
      },
      (error: Error) => callback(error, null),
    );
  };
}

/** The name TLS checks the certificate against: the host's name, none for an address. */
function serverName(hostname: string): string | undefined {
  const host = bare(hostname);
  return parseAddress(host) ? undefined : noDot(host);
}
