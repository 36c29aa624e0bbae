/**
 * Whether the start of a file is binary, as PicoClaw judges it: a NUL byte,
 * bytes that are not UTF-8, or more than a tenth control characters (other
 * than tab, line and form feed, carriage return, backspace) in the first
 * 512 bytes.
 */
export function looksBinary(sample: Uint8Array): boolean {
  const head = sample.subarray(0, 512);
  if (head.length === 0) return false;
  if (head.includes(0)) return true;
  if (!validUtf8(head)) return true;
  let control = 0;
  for (const byte of head) if (byte < 0x20 && ![0x09, 0x0a, 0x0d, 0x0c, 0x08].includes(byte)) control++;
  return control / head.length > 0.1;
}

const decoder = new TextDecoder("utf-8", { fatal: true });

/** Valid UTF-8, allowing a character cut at the end of the sample. */
function validUtf8(bytes: Uint8Array): boolean {
  for (let cut = 0; cut < 4 && cut <= bytes.length; cut++) {
    try {
      decoder.decode(bytes.subarray(0, bytes.length - cut));
      return true;
    } catch {
      // try again without a last character that may have been cut
    }
  }
  return false;
}
