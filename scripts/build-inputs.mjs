// What a build of dist/ is made from, so that `npm start` can tell whether
// the build is current without building: the sources (src/, and the chat
// page's web/), the build's settings (tsconfig.json, the build scripts)
// and package-lock.json (the bundle carries copies of the packages it
// uses). scripts/build.mjs writes a digest of their contents to STAMP.
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync, statSync, utimesSync } from "node:fs";
import path from "node:path";

/** The build's record of what it was made from, relative to the project. */
export const STAMP = path.join("dist", ".build-inputs");

const SETTINGS = ["tsconfig.json", "package-lock.json", path.join("scripts", "build.mjs"), path.join("scripts", "build-web.mjs")];

function sourcesUnder(dir, pattern, found) {
  if (!existsSync(dir)) return found;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) sourcesUnder(full, pattern, found);
    else if (pattern.test(entry.name)) found.push(full);
  }
  return found;
}

/** Every input file of the project at `root`, in a stable order. */
export function buildInputs(root) {
  const files = sourcesUnder(path.join(root, "src"), /\.ts$/, []);
  sourcesUnder(path.join(root, "web"), /\.(ts|html|css|svg)$/, files);
  for (const file of SETTINGS) if (existsSync(path.join(root, file))) files.push(path.join(root, file));
  return files.sort();
}

/** The newest modification time among `files`. */
export function newestOf(files) {
  let newest = 0;
  for (const file of files) newest = Math.max(newest, statSync(file).mtimeMs);
  return newest;
}

/** A digest of the files' names (relative to `root`) and contents. */
export function digestOf(root, files) {
  const hash = createHash("sha256");
  for (const file of files)
    hash
      .update(`${path.relative(root, file)}\0`)
      .update(readFileSync(file))
      .update("\0");
  return hash.digest("hex");
}

/**
 * Whether dist/ of the project at `root` was built from its inputs as they
 * are now: a few milliseconds of file stats when no input is newer than the
 * build, else a digest of their contents (a copy or a checkout may give
 * unchanged files new times; then the stamp takes the time of now, so the
 * next check needs only the stats). `withTypes`: the type declarations too
 * (a build by `npm start` leaves them out).
 */
export function buildIsCurrent(root, withTypes = false) {
  const stamp = path.join(root, STAMP);
  const made = statSync(stamp, { throwIfNoEntry: false });
  if (!made || !existsSync(path.join(root, "dist", "main.js"))) return false;
  if (withTypes && !existsSync(path.join(root, "dist", "main.d.ts"))) return false;
  if (existsSync(path.join(root, "web")) && !existsSync(path.join(root, "dist", "web", "index.html"))) return false;
  const inputs = buildInputs(root);
  if (newestOf(inputs) <= made.mtimeMs) return true;
  if (readFileSync(stamp, "utf8").trim() !== digestOf(root, inputs)) return false;
  // Not a file's time from the future: an edit made before then would go unseen.
  const now = new Date();
  utimesSync(stamp, now, now);
  return true;
}
