import { z } from "zod";

/** `agents.defaults.prompt_files`: the workspace's files that join every turn's system prompt. */
export const promptFilesSection = z
  .strictObject({
    enabled: z.boolean().default(true).describe("SOUL.md, USER.md, IDENTITY.md and memory/MEMORY.md of the workspace join the system prompt."),
    max_bytes: z
      .int()
      .min(256)
      .max(60 * 1024)
      .default(16 * 1024)
      .describe("The most bytes each file adds; a longer one is cut at a line, saying so."),
  })
  .prefault({});
