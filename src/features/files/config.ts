import { z } from "zod";

/** The file tools' sections: PicoClaw's `tools.read_file`, `write_file`, `edit_file`, `append_file`, `list_dir`, with our bounds. */

const MiB = 1024 * 1024;
const bytes = (fallback: number, what: string) =>
  z
    .int()
    .min(1024)
    .max(64 * MiB)
    .default(fallback)
    .describe(what);

export const readFileSection = z
  .strictObject({
    enabled: z.boolean().default(true),
    mode: z
      .enum(["bytes", "lines"])
      .default("bytes")
      .describe('"bytes": a window of offset and length; "lines": numbered lines from start_line (PicoClaw\'s two forms of read_file).'),
    max_read_file_size: bytes(65_536, "The most bytes one call reads (lines mode: of output, numbers included)."),
  })
  .prefault({});

export const writeFileSection = z.strictObject({ enabled: z.boolean().default(true), max_bytes: bytes(MiB, "The most bytes one call writes.") }).prefault({});

export const editFileSection = z
  .strictObject({ enabled: z.boolean().default(true), max_file_bytes: bytes(MiB, "The largest file edit_file reads and writes back.") })
  .prefault({});

export const appendFileSection = z.strictObject({ enabled: z.boolean().default(true), max_bytes: bytes(MiB, "The most bytes one call appends.") }).prefault({});

export const listDirSection = z
  .strictObject({
    enabled: z.boolean().default(true),
    max_entries: z.int().min(1).max(100_000).default(1000).describe("Entries one call lists at most; the rest are counted."),
  })
  .prefault({});
