// hono refers to the Fetch standard's Headers, Request and Response as
// globals. Node's globals are its built-in undici's, whose loading costs a
// process ~10 MiB and ~17 ms (README, "Architecture"), so the gateway gives
// hono its own (src/gateway/http/): this prepends their import to each of
// hono's modules. The build (esbuild) and the tests (vitest) both apply it,
// so the tests run hono as the gateway does.
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The module that exports the three classes. */
export const FETCH_CLASSES = path.join(root, "src", "gateway", "http", "fetch-classes.ts");

/** hono's modules (esbuild's filter: no look-ahead in it). */
export const HONO_MODULE = /[\\/]node_modules[\\/]hono[\\/]dist[\\/].*\.js$/;

/** hono's ES modules, not its CommonJS copies (which nothing here loads). */
export function isHonoModule(file) {
  return HONO_MODULE.test(file) && !/[\\/]dist[\\/]cjs[\\/]/.test(file);
}

/** A hono module's code with the classes imported: its references to the globals now name them. */
export function withFetchClasses(code) {
  return `import { Headers, Request, Response } from ${JSON.stringify(FETCH_CLASSES)};\n${code}`;
}
