import { PicoclawError, messageOf } from "../../errors.js";

/** The session database cannot be reached now (down, restarting, too slow): answered 503, worth trying again. */
export class StoreUnavailableError extends PicoclawError {
  constructor(message: string, cause?: unknown) {
    super(message, { code: "store_unavailable", fault: "system", cause });
  }
}

/** The database answered, and refused what was asked (a broken schema, a value it cannot take): answered 500. */
export class StoreFailedError extends PicoclawError {
  constructor(message: string, cause?: unknown) {
    super(message, { code: "storage_failed", fault: "system", cause });
  }
}

/** SQLSTATE classes of a connection that went or a server that is going: 08 connection exception, 57P0x shutdown, 53 resources. */
const UNAVAILABLE_STATE = /^(08|57P0|53|55P03|57014)/;
/** Node's network errors on the way to the server. */
const NETWORK = new Set(["ECONNREFUSED", "ECONNRESET", "ENOENT", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "EPIPE", "EAI_AGAIN", "ENOTFOUND"]);

/**
 * What a failed database call becomes: a StoreUnavailableError when the
 * database could not be reached or went away (the client may try again),
 * else a StoreFailedError. `what` says what was being done ("reading the
 * history of agent:main:http:s1"). The message is the driver's, which
 * never holds the connection string.
 */
export function storeError(what: string, error: unknown): PicoclawError {
  if (error instanceof PicoclawError) return error;
  const code = (error as { code?: unknown } | undefined)?.code;
  const text = messageOf(error);
  const unavailable =
    (typeof code === "string" && (UNAVAILABLE_STATE.test(code) || NETWORK.has(code))) ||
    /timeout|terminated|Connection terminated|not queryable|ended|closed/i.test(text);
  return unavailable
    ? new StoreUnavailableError(`the session database is not reachable (${what}): ${text}`, error)
    : new StoreFailedError(`the session database refused ${what}: ${text}`, error);
}
