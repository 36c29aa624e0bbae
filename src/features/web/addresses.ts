import ipaddr from "ipaddr.js";

/**
 * Which addresses web_fetch may connect to. Only ordinary public unicast
 * is reachable: loopback, RFC 1918, link-local (the cloud metadata address
 * 169.254.169.254 among them), carrier-grade NAT, 0.0.0.0/8, benchmarking,
 * multicast, broadcast and the reserved ranges are refused, and so are
 * their IPv6 forms (loopback, unspecified, unique local, link-local,
 * multicast) and every IPv6 address that carries an IPv4 one (mapped,
 * translated, NAT64, 6to4, Teredo) when that IPv4 address is refused.
 * Parsing and range tables are ipaddr.js's.
 */

type Address = ipaddr.IPv4 | ipaddr.IPv6;

const cidr = (text: string) => ipaddr.parseCIDR(text) as [ipaddr.IPv6, number];
const GLOBAL_UNICAST = cidr("2000::/3");
const SIX_TO_FOUR = cidr("2002::/16");
const TEREDO = cidr("2001::/32");
const NAT64 = cidr("64:ff9b::/96");
const MAPPED = cidr("::ffff:0:0/96");
const TRANSLATED = cidr("::ffff:0:0:0/96");
const COMPATIBLE = cidr("::/96");

/** What a refused IPv4 range is called in a refusal. */
const V4_NAMES: Readonly<Record<string, string>> = {
  unspecified: "an unspecified (0.0.0.0/8) address",
  broadcast: "the broadcast address",
  multicast: "a multicast address",
  linkLocal: "a link-local address (169.254.0.0/16, where cloud metadata services answer)",
  loopback: "a loopback address",
  carrierGradeNat: "a carrier-grade NAT address (100.64.0.0/10)",
  private: "a private network address",
  reserved: "a reserved or benchmarking address",
};

const V6_NAMES: Readonly<Record<string, string>> = {
  unspecified: "the unspecified address",
  linkLocal: "a link-local address (fe80::/10)",
  multicast: "a multicast address",
  loopback: "a loopback address",
  uniqueLocal: "a unique local address (fc00::/7)",
};

const v4 = (bytes: readonly number[]) => ipaddr.fromByteArray([...bytes]) as ipaddr.IPv4;

function refusedV4(address: ipaddr.IPv4): string | undefined {
  const range = address.range();
  if (range === "unicast") return undefined;
  return V4_NAMES[range] ?? `a special-purpose address (${range})`;
}

/** The IPv4 address an IPv6 one carries, with how, when it carries one. */
function embedded(address: ipaddr.IPv6): { inner: ipaddr.IPv4; how: string } | undefined {
  const bytes = address.toByteArray();
  if (address.match(MAPPED)) return { inner: v4(bytes.slice(12)), how: "IPv4-mapped" };
  if (address.match(TRANSLATED)) return { inner: v4(bytes.slice(12)), how: "IPv4-translated" };
  if (address.match(NAT64)) return { inner: v4(bytes.slice(12)), how: "NAT64" };
  if (address.match(SIX_TO_FOUR)) return { inner: v4(bytes.slice(2, 6)), how: "6to4" };
  if (address.match(TEREDO)) return { inner: v4(bytes.slice(12).map((b) => b ^ 0xff)), how: "Teredo" };
  return undefined;
}

function refusedV6(address: ipaddr.IPv6): string | undefined {
  const carried = embedded(address);
  if (carried) {
    const inner = refusedV4(carried.inner);
    return inner === undefined ? undefined : `the ${carried.how} IPv6 form of ${carried.inner.toString()}, ${inner}`;
  }
  const range = address.range();
  if (V6_NAMES[range]) return V6_NAMES[range];
  if (address.match(COMPATIBLE)) return "an IPv4-compatible IPv6 address";
  if (range === "unicast" && address.match(GLOBAL_UNICAST)) return undefined;
  return `a special-purpose address (${range})`;
}

/** An address as written (`10.0.0.1`, `::1`, `[::1]`), parsed; undefined when it is none. */
export function parseAddress(text: string): Address | undefined {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  // isValid accepts shorthand forms (`10.1`, `0x7f.1`); only the four-part and IPv6 forms are addresses here (URL parsing made the rest canonical).
  if (!ipaddr.IPv4.isValidFourPartDecimal(bare) && !(bare.includes(":") && ipaddr.IPv6.isValid(bare))) return undefined;
  return ipaddr.parse(bare);
}

/**
 * Why web_fetch may not connect to an address, or undefined when it may
 * (ordinary public unicast). The text names the kind, as in "a loopback address".
 */
export function refusedAddress(text: string): string | undefined {
  const address = parseAddress(text);
  if (address === undefined) return "not an IP address";
  return address.kind() === "ipv4" ? refusedV4(address as ipaddr.IPv4) : refusedV6(address as ipaddr.IPv6);
}

/** An IP address or CIDR range of `private_host_whitelist`, parsed; undefined when it is neither. */
export function parseAddressRange(text: string): [Address, number] | undefined {
  const entry = text.trim();
  if (entry.includes("/")) {
    if (!ipaddr.isValidCIDR(entry)) return undefined;
    const [address, bits] = ipaddr.parseCIDR(entry);
    return [address, bits];
  }
  const address = parseAddress(entry);
  return address === undefined ? undefined : [address, address.kind() === "ipv4" ? 32 : 128];
}

/** A host of `allow_hosts`: a name or address, on any port or on one. */
export interface HostRule {
  /** As URL parsing writes it: lower case, IPv6 in brackets. */
  readonly hostname: string;
  readonly port: number | undefined;
}

/** An `allow_hosts` entry (`nas.lan`, `nas.lan:8080`, `10.0.0.5`, `[fd00::1]:8080`) as a rule; undefined when it is none. */
export function hostRule(entry: string): HostRule | undefined {
  if (!/^[^\s/\\?#@]+$/.test(entry) || !URL.canParse(`http://${entry}`)) return undefined;
  const explicit = /:(\d+)$/.exec(entry);
  return { hostname: stripDot(new URL(`http://${entry}`).hostname), port: explicit ? Number(explicit[1]) : undefined };
}

const stripDot = (hostname: string) => (hostname.endsWith(".") ? hostname.slice(0, -1) : hostname);

/** The same address in one form (an IPv4-mapped IPv6 address as its IPv4 address), for comparing. */
function canonical(address: Address): Address {
  return address.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress() ? (address as ipaddr.IPv6).toIPv4Address() : address;
}

const same = (a: Address, b: Address) => a.kind() === b.kind() && a.toNormalizedString() === b.toNormalizedString();

/**
 * The operator's exceptions: `tools.web.allow_hosts` (names and addresses,
 * with or without a port) and PicoClaw's `tools.web.private_host_whitelist`
 * (addresses and ranges, any port).
 */
export class AllowList {
  private readonly rules: readonly HostRule[];
  private readonly ruleAddresses: readonly { address: Address; port: number | undefined }[];
  private readonly ranges: readonly [Address, number][];

  constructor(allowHosts: readonly string[], whitelist: readonly string[]) {
    this.rules = allowHosts.map((entry) => {
      const rule = hostRule(entry);
      if (!rule) throw new TypeError(`allow_hosts entry ${JSON.stringify(entry)} is not a host`);
      return rule;
    });
    this.ruleAddresses = this.rules.flatMap((rule) => {
      const address = parseAddress(rule.hostname);
      return address ? [{ address: canonical(address), port: rule.port }] : [];
    });
    this.ranges = whitelist.map((entry) => {
      const range = parseAddressRange(entry);
      if (!range) throw new TypeError(`private_host_whitelist entry ${JSON.stringify(entry)} is not an address or range`);
      return [canonical(range[0]), range[0].kind() === "ipv6" && canonical(range[0]).kind() === "ipv4" ? range[1] - 96 : range[1]];
    });
  }

  /** Whether a URL's host (a name, or an address as URL parsing writes it) is listed for this port. */
  allowsHost(hostname: string, port: number): boolean {
    const name = stripDot(hostname.toLowerCase());
    return this.rules.some((rule) => rule.hostname === name && (rule.port === undefined || rule.port === port));
  }

  /** Whether a (resolved or literal) address is listed for this port: an address of allow_hosts, or one inside a whitelisted range. */
  allowsAddress(text: string, port: number): boolean {
    const parsed = parseAddress(text);
    if (!parsed) return false;
    const address = canonical(parsed);
    if (this.ruleAddresses.some((rule) => same(rule.address, address) && (rule.port === undefined || rule.port === port))) return true;
    return this.ranges.some(([base, bits]) => base.kind() === address.kind() && address.match(base as never, bits));
  }
}
