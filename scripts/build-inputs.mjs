// What a build of dist/ is made from, so that `npm start` can tell whether
// the build is current without building: the sources (src/, and the chat
// page's web/), the build's settings (tsconfig.json, the build scripts)
// and package-lock.json (the bundle carries copies of the packages it
// uses). scripts/build.mjs writes to STAMP a digest of their contents and
// the list of them and of the folders they were found in.
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync, statSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";

/** The build's record of what it was made from, relative to the project. */
export const STAMP = path.join("dist", ".build-inputs");

const SETTINGS = [
  "tsconfig.json",
  "package-lock.json",
  path.join("scripts", "build.mjs"),
  path.join("scripts", "build-web.mjs"),
  path.join("scripts", "fetch-classes.mjs"),
  path.join("scripts", "write-code-cache.cjs"),
];

function sourcesUnder(dir, pattern, found, folders) {
  if (!existsSync(dir)) return found;
  folders?.push(dir);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) sourcesUnder(full, pattern, found, folders);
    else if (pattern.test(entry.name)) found.push(full);
  }
  return found;
}

/**
 * Every input file of the project at `root`, in a stable order. `folders`
 * (when given) gets every folder they were looked for in: a file added to
 * or taken from one, or renamed in it, gives that folder a new time.
 */
export function buildInputs(root, folders) {
  const files = sourcesUnder(path.join(root, "src"), /\.ts$/, [], folders);
  sourcesUnder(path.join(root, "web"), /\.(ts|html|css|svg)$/, files, folders);
  for (const file of SETTINGS) if (existsSync(path.join(root, file))) files.push(path.join(root, file));
  return files.sort();
}

/**
 * What scripts/build.mjs writes to STAMP: the digest, then one a line each
 * input (`f`), folder (`d`) and settings file there was not (`n`: one that
 * appears is an input more), relative to `root`.
 */
export function stampText(root, digest, files, folders) {
  const absent = SETTINGS.filter((file) => !existsSync(path.join(root, file)));
  const lines = [
    digest,
    ...files.map((file) => `f ${path.relative(root, file)}`),
    ...folders.map((dir) => `d ${path.relative(root, dir)}`),
    ...absent.map((file) => `n ${file}`),
  ];
  return `${lines.join("\n")}\n`;
}

/**
 * The quick check: whether every input and folder the stamp lists is there
 * and none has a time after the stamp's (a stat each, nothing listed). A
 * stamp without the lists (an older build) is never current by it.
 */
function unchangedSince(root, lines, madeMs) {
  if (lines.length < 2) return false;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    if (line === "") continue;
    const found = statSync(path.join(root, line.slice(2)), { throwIfNoEntry: false });
    if (line.startsWith("n ")) {
      if (found) return false;
    } else if (!found || found.mtimeMs > madeMs || found.isDirectory() !== line.startsWith("d ")) return false;
  }
  return true;
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
 * are now: a stat of each input and folder the stamp lists when none is
 * newer than the build (about 2 ms for 400 of them; listing the folders
 * took three times that), else a digest of their contents (a copy or a
 * checkout may give unchanged files new times; then the stamp is written
 * again, with the time they were read at, so the next check needs only the
 * stats).
 * `withTypes`: the type declarations too (a build by `npm start` leaves
 * them out).
 */
export function buildIsCurrent(root, withTypes = false) {
  const stamp = path.join(root, STAMP);
  const made = statSync(stamp, { throwIfNoEntry: false });
  if (!made || !existsSync(path.join(root, "dist", "main.js"))) return false;
  if (withTypes && !existsSync(path.join(root, "dist", "main.d.ts"))) return false;
  if (existsSync(path.join(root, "web")) && !existsSync(path.join(root, "dist", "web", "index.html"))) return false;
  const lines = readFileSync(stamp, "utf8").split("\n");
  if (unchangedSince(root, lines, made.mtimeMs)) return true;
  // The stamp's time is when its inputs were read: one edited after that is newer than the stamp.
  const readAt = new Date(Date.now() - 1);
  const folders = [];
  const inputs = buildInputs(root, folders);
  const digest = digestOf(root, inputs);
  if (lines[0].trim() !== digest) return false;
  // Not a file's time from the future either, or an edit made before then would go unseen.
  writeFileSync(stamp, stampText(root, digest, inputs, folders));
  utimesSync(stamp, readAt, readAt);
  return true;
}
