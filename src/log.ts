import pino from "pino";

/** What the core needs from a logger; tests pass a recording one. */
export interface Logger {
  info(message: string, data?: Record<string, unknown>): void;
  warn(message: string, data?: Record<string, unknown>): void;
  error(message: string, data?: Record<string, unknown>): void;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

/** The same logger with `redact` applied to every message and every string in its data. */
export function redactingLogger(logger: Logger, redact: (text: string) => string): Logger {
  const clean = (value: unknown): unknown => {
    if (typeof value === "string") return redact(value);
    if (Array.isArray(value)) return value.map(clean);
    if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clean(v)]));
    return value;
  };
  const line =
    (write: Logger["info"]): Logger["info"] =>
    (message, data) =>
      write(redact(message), data === undefined ? undefined : (clean(data) as Record<string, unknown>));
  return { info: line(logger.info.bind(logger)), warn: line(logger.warn.bind(logger)), error: line(logger.error.bind(logger)) };
}

/**
 * A pino logger writing JSON lines to stderr (stdout stays for replies and
 * the listening line). Lines are written without blocking: a line logged
 * while the previous write is under way goes out with the next one, so a
 * busy gateway makes one write for many lines instead of one each; what is
 * still buffered when the process exits is written then.
 */
export function createLogger(level = "info"): Logger {
  const log = pino(
    { level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (label) => ({ level: label }) } },
    pino.destination({ fd: 2, sync: false }),
  );
  return {
    info: (message, data) => log.info(data ?? {}, message),
    warn: (message, data) => log.warn(data ?? {}, message),
    error: (message, data) => log.error(data ?? {}, message),
  };
}
