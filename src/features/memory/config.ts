import { z } from "zod";

/** `tools.memory_search`: full-text search over the workspace's memory/ notes, with its bounds. */
export const memorySearchSection = z
  .strictObject({
    enabled: z.boolean().default(true),
    max_files: z
      .int()
      .min(1)
      .max(100_000)
      .default(2000)
      .describe("Files of memory/ indexed at most (by path order); the rest are not searched, and the result says so."),
    max_bytes: z
      .int()
      .min(1024)
      .max(256 * 1024 * 1024)
      .default(16 * 1024 * 1024)
      .describe("Bytes of memory/ notes indexed at most, all files together; a file that would pass it is not searched, and the result says so."),
  })
  .prefault({});

export type MemorySearchSection = z.output<typeof memorySearchSection>;
