// npm's `prepare` (after `npm ci` / `npm install` in a checkout, before
// `npm pack`, and the first time `npx picoclaw` runs in the package's own
// folder: npm exec installs the folder into its cache, which runs it): the
// full build (`npm run build`), but only when dist/ is not current (missing,
// without type declarations, or made from other inputs than the project's
// now); a current build is left as it is, in milliseconds. A build says so
// on stderr first, and the project's .npmrc (`foreground-scripts`) lets
// npm show it: nobody waits for many seconds without a word.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildIsCurrent } from "./build-inputs.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

if (!buildIsCurrent(root, true)) {
  process.stderr.write("picoclaw: building dist/ (first run, or the sources changed since the last build)...\n");
  const result = spawnSync(process.execPath, [path.join(root, "scripts", "build.mjs")], { stdio: "inherit" });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
