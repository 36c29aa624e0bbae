import pino from "pino";

/** What the core needs from a logger; tests pass a recording one. */
export interface Logger {
  info(message: string, data?: Record<string, unknown>): void;
  warn(message: string, data?: Record<string, unknown>): void;
  error(message: string, data?: Record<string, unknown>): void;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

/** A pino logger writing JSON lines to stderr (stdout stays for replies and the listening line). */
export function createLogger(level = "info"): Logger {
  const log = pino(
    { level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (label) => ({ level: label }) } },
    pino.destination({ fd: 2, sync: true }),
  );
  return {
    info: (message, data) => log.info(data ?? {}, message),
    warn: (message, data) => log.warn(data ?? {}, message),
    error: (message, data) => log.error(data ?? {}, message),
  };
}
