import { prepare } from "./bootstrap.js";
import type { LoadedConfig } from "./config/load.js";
import { GatewayAnswer, errorText, gatewayCaller, refused } from "./cron-cli.js";
import { pairedJson, pendingJson } from "./gateway/pairing-route.js";
import type { Logger } from "./log.js";
import { table } from "./text-table.js";
import type { Redact } from "./tools/redact.js";

/**
 * `picoclaw pairing list | approve CODE | deny CODE | revoke CHANNEL USER`:
 * chat users waiting to be let in (README, "Pairing"), through the running
 * gateway's API (`/v1/pairing`, with the config's token) when one answers
 * at the config's address (so the channel tells an approved user they are
 * in), else in the store itself (the session folder, taken for this
 * process; no channel runs, so nobody is told).
 */

export interface PairingCliIO {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** A usage mistake: exit 2 with the usage text. */
export class PairingUsageError extends Error {}

type PendingJson = ReturnType<typeof pendingJson>;
type PairedJson = ReturnType<typeof pairedJson>;

interface Book {
  list(): Promise<{ pending: PendingJson[]; paired: PairedJson[] }>;
  /** undefined: no such code waiting. */
  approve(code: string): Promise<PairedJson | undefined>;
  deny(code: string): Promise<PendingJson | undefined>;
  revoke(channel: string, user: string): Promise<boolean>;
  close(): Promise<void>;
}

const SUBCOMMANDS = ["list", "approve", "deny", "revoke"];

export async function pairingCommand(
  loaded: LoadedConfig,
  log: { logger: Logger; redact: Redact },
  io: PairingCliIO,
  args: { sub: string | undefined; rest: string[] },
): Promise<number> {
  const { sub, rest } = args;
  if (!SUBCOMMANDS.includes(sub ?? ""))
    throw new PairingUsageError(`unknown pairing command "${sub ?? ""}"; try: picoclaw pairing list | approve CODE | deny CODE | revoke CHANNEL USER_ID`);
  if ((sub === "approve" || sub === "deny") && !rest[0]) throw new PairingUsageError(`pairing ${sub} needs the code: picoclaw pairing ${sub} <CODE>`);
  if (sub === "revoke" && (!rest[0] || !rest[1]))
    throw new PairingUsageError("pairing revoke needs the channel and the user id: picoclaw pairing revoke telegram 123456");
  const book = (await viaGateway(loaded)) ?? (await inStore(loaded, log));
  try {
    if (sub === "list") {
      const { pending, paired } = await book.list();
      io.stdout(
        pending.length === 0
          ? "No pairing codes waiting."
          : table(
              ["CODE", "CHANNEL", "USER", "EXPIRES"],
              pending.map((p) => [p.code, p.channel, p.user_name ? `${p.user_id} (${p.user_name})` : p.user_id, p.expires_at]),
            ),
      );
      io.stdout(
        paired.length === 0
          ? "No paired users."
          : table(
              ["CHANNEL", "PAIRED USER", "SINCE"],
              paired.map((u) => [u.channel, u.user_name ? `${u.user_id} (${u.user_name})` : u.user_id, u.approved_at]),
            ),
      );
      return 0;
    }
    if (sub === "revoke") {
      const [channel, user] = rest as [string, string];
      if (!(await book.revoke(channel, user))) {
        io.stderr(`picoclaw: channel "${channel}" has no paired user "${user}"`);
        return 1;
      }
      io.stdout(`Revoked: user ${user} of channel ${channel} is no longer let in.`);
      return 0;
    }
    const code = rest[0]!;
    if (sub === "approve") {
      const user = await book.approve(code);
      if (!user) return noCode(io, code);
      io.stdout(`Approved: user ${user.user_id}${user.user_name ? ` (${user.user_name})` : ""} of channel ${user.channel} is let in.`);
      return 0;
    }
    const denied = await book.deny(code);
    if (!denied) return noCode(io, code);
    io.stdout(`Denied: code ${denied.code} of user ${denied.user_id} (channel ${denied.channel}) is dropped.`);
    return 0;
  } finally {
    await book.close();
  }
}

function noCode(io: PairingCliIO, code: string): number {
  io.stderr(`picoclaw: there is no pairing code "${code}" waiting (it may have expired: the user gets a new one by writing again)`);
  return 1;
}

/** The running gateway's API, or undefined when nothing answers at the config's address. */
async function viaGateway(loaded: LoadedConfig): Promise<Book | undefined> {
  const { base, call } = gatewayCaller(loaded);
  const answered = async <T>(res: Response, key: string): Promise<T | undefined> => {
    if (res.status === 404) return undefined;
    if (!res.ok) throw new GatewayAnswer(`the gateway answered ${res.status}: ${await errorText(res)}`);
    return ((await res.json()) as Record<string, T>)[key];
  };
  try {
    const probe = await call("GET", "/v1/pairing");
    if (probe.status === 404) throw new GatewayAnswer("the gateway at that address has no /v1/pairing (is it an older version?)");
    if (!probe.ok) throw new GatewayAnswer(`the gateway at ${base} answered ${probe.status}: ${await errorText(probe)}`);
    const listed = (await probe.json()) as { pending: PendingJson[]; paired: PairedJson[] };
    const at = (code: string, action: string) => `/v1/pairing/${encodeURIComponent(code)}/${action}`;
    return {
      list: async () => listed,
      approve: async (code) => answered<PairedJson>(await call("POST", at(code, "approve")), "approved"),
      deny: async (code) => answered<PendingJson>(await call("POST", at(code, "deny")), "denied"),
      revoke: async (channel, user) =>
        (await answered(await call("DELETE", `/v1/pairing/users/${encodeURIComponent(channel)}/${encodeURIComponent(user)}`), "revoked")) !== undefined,
      close: async () => {},
    };
  } catch (error) {
    if (error instanceof GatewayAnswer) throw error;
    // Nothing listens there (the connection was refused): the store is ours to open. Anything else is said, not guessed past.
    if (refused(error)) return undefined;
    throw new GatewayAnswer(
      `the gateway at ${base} did not answer as one (${error instanceof Error ? error.message : String(error)}); is it another program on that port?`,
    );
  }
}

/** The store itself (the session folder, taken for this process), with no channel started. */
async function inStore(loaded: LoadedConfig, log: { logger: Logger; redact: Redact }): Promise<Book> {
  const { runtime } = await prepare(loaded, { logger: log.logger, redact: log.redact, makeWorkspaces: false });
  const pairings = runtime.pairings;
  return {
    list: async () => ({ pending: (await pairings.pending()).map(pendingJson), paired: (await pairings.paired()).map(pairedJson) }),
    approve: async (code) => {
      const user = await pairings.approve(code);
      return user && pairedJson(user);
    },
    deny: async (code) => {
      const pending = await pairings.deny(code);
      return pending && pendingJson(pending);
    },
    revoke: (channel, user) => pairings.revoke(channel, user),
    close: () => runtime.close(0),
  };
}
