import { z } from "zod";

/** `tools.skills`: PicoClaw's section for its skills (the catalog in the system prompt; registries are not ours). */
export const skillsSection = z
  .strictObject({
    enabled: z.boolean().default(true).describe("The skills of the workspace, $PICOCLAW_HOME/skills and the built-in ones are listed in the system prompt."),
    max_prompt_bytes: z
      .int()
      .min(512)
      .max(60 * 1024)
      .default(8 * 1024)
      .describe("The most bytes the skills list adds to the system prompt; skills past it are counted, not listed."),
    max_skills: z.int().min(1).max(1000).default(100).describe("Skills read from each folder at most (in name order); the rest are left out with a warning."),
  })
  .prefault({});

export type SkillsSection = z.output<typeof skillsSection>;
