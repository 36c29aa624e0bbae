// `npm start`: the gateway from dist/, at once. It builds first only when
// the build is missing or was made from other inputs than the project's
// now (after a `git pull`, an edit, a change of packages): a few
// milliseconds of file stats when no input is newer than the build, and a
// digest of their contents when one is (a copy or a checkout may give
// unchanged files new times). That build leaves the type declarations as
// they are (`--no-types`: running needs only the JavaScript), and writes
// V8's code cache beside the gateway it starts, for the starts after
// (`--code-cache-later`), instead of before it. npm runs this
// with `exec`, so a signal sent to `npm start` reaches the gateway.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { buildIsCurrent } from "./build-inputs.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const built = path.join(root, "dist", "main.js");

if (existsSync(path.join(root, "src")) && !buildIsCurrent(root)) {
  process.stderr.write("picoclaw: sources changed since the last build; building...\n");
  const result = spawnSync(process.execPath, [path.join(root, "scripts", "build.mjs"), "--no-types", "--code-cache-later"], { stdio: "inherit" });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
await import(pathToFileURL(built).href);
