/** Sizes in bytes, as people read them and as UTF-8 cuts them. */

/** `812 bytes`, `64 KiB`, `20.3 MiB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  const [value, unit] = bytes < 1024 * 1024 ? [bytes / 1024, "KiB"] : [bytes / (1024 * 1024), "MiB"];
  return `${Number(value.toFixed(1))} ${unit}`;
}

/** The longest start of `text` that fits in `maxBytes` of UTF-8 (never half a character). */
export function cutToBytes(text: string, maxBytes: number): string {
  const encoded = Buffer.from(text.slice(0, maxBytes), "utf8");
  if (encoded.byteLength <= maxBytes) return encoded.toString("utf8");
  let end = maxBytes;
  // Step back to the first byte of a character (continuation bytes are 10xxxxxx).
  while (end > 0 && (encoded[end]! & 0xc0) === 0x80) end--;
  return encoded.subarray(0, end).toString("utf8");
}
