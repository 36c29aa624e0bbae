import { createHash } from "node:crypto";

/**
 * Session keys as file names: a safe, distinct and (almost always)
 * reversible encoding. `agent:main:http:Bob` is `agent_main_http_~42ob`:
 * lowercase letters, digits and `-` stay; `:` becomes `_`; any other
 * character (uppercase letters too, so case-insensitive file systems keep
 * `Bob` and `bob` apart) becomes `~` and the hex of each of its UTF-8
 * bytes. No name holds a path separator, starts with a dot or is a device
 * name. A name that would be over `MAX_NAME` characters is cut and ends with
 * `~~` and a hash of the whole key instead (`~~` appears in no other name);
 * such a name cannot be read back, so the session's meta file says its key.
 */

/** Characters of a file name before its extension (file systems allow 255 bytes; extensions and a temp suffix need some). */
export const MAX_NAME = 200;

const KEPT = /^[a-z0-9-]$/;
/** A name of kept characters and `_` only. */
const PLAIN = /^[a-z0-9_-]+$/;

/** The file name (without extension) of a session key. */
export function fileNameOf(key: string): string {
  const parts: string[] = [];
  for (const char of key) {
    if (KEPT.test(char)) parts.push(char);
    else if (char === ":") parts.push("_");
    else for (const byte of Buffer.from(char, "utf8")) parts.push(`~${byte.toString(16).padStart(2, "0")}`);
  }
  let name = parts.join("");
  // Never empty, never a dot file: a key that encodes to nothing still gets a name.
  if (name === "") name = "~";
  if (name.length <= MAX_NAME) return name;
  const hash = createHash("sha256").update(key, "utf8").digest("hex").slice(0, 32);
  return `${name.slice(0, MAX_NAME - 34)}~~${hash}`;
}

/** The key a file name encodes, or null when it encodes none (a hashed name, or a file that is not ours). */
export function keyOfFileName(name: string): string | null {
  // Most names hold no escaped character: each of theirs stands for itself, and `_` for `:`.
  if (PLAIN.test(name)) return name.replaceAll("_", ":");
  if (name.includes("~~") || name === "~") return null;
  const bytes: number[] = [];
  for (let i = 0; i < name.length; i++) {
    const char = name[i]!;
    if (char === "~") {
      const hex = name.slice(i + 1, i + 3);
      if (!/^[0-9a-f]{2}$/.test(hex)) return null;
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else if (char === "_") bytes.push(0x3a);
    else if (KEPT.test(char)) bytes.push(char.charCodeAt(0));
    else return null;
  }
  const key = Buffer.from(bytes).toString("utf8");
  // Only the one encoding of a key is read back (a hand-made `~41` for `A` is, but `~7a` for `z` is not ours).
  return fileNameOf(key) === name ? key : null;
}
