// `npm start`: the gateway from dist/, at once. It builds first only when
// the build is missing or was made from other inputs than the project's
// now (after a `git pull`, an edit, a change of packages): a few
// milliseconds of file stats when no input is newer than the build, and a
// digest of their contents when one is (a copy or a checkout may give
// unchanged files new times). That build leaves the type declarations as
// they are (`--no-types`: running needs only the JavaScript). npm runs this
// with `exec`, so a signal sent to `npm start` reaches the gateway.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, statSync, utimesSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { STAMP, buildInputs, digestOf, newestOf } from "./build-inputs.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const built = path.join(root, "dist", "main.js");
const stamp = path.join(root, STAMP);

/** Whether dist/ was built from the project's inputs as they are now. */
function current() {
  const made = statSync(stamp, { throwIfNoEntry: false });
  if (!made || !existsSync(built)) return false;
  if (existsSync(path.join(root, "web")) && !existsSync(path.join(root, "dist", "web", "index.html"))) return false;
  const inputs = buildInputs(root);
  if (newestOf(inputs) <= made.mtimeMs) return true;
  if (readFileSync(stamp, "utf8").trim() !== digestOf(root, inputs)) return false;
  // Newer times, same contents: the stamp takes the time of now, so the next start needs only the stats.
  // (Not a file's time from the future: an edit made before then would go unseen.)
  const now = new Date();
  utimesSync(stamp, now, now);
  return true;
}

if (existsSync(path.join(root, "src")) && !current()) {
  process.stderr.write("picoclaw: sources changed since the last build; building...\n");
  const result = spawnSync(process.execPath, [path.join(root, "scripts", "build.mjs"), "--no-types"], { stdio: "inherit" });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
await import(pathToFileURL(built).href);
