import { z } from "zod";

/** The plugins feature's config: `tools.plugins`, the tool modules to load (README, "Writing a tool"). */
export const pluginsSection = z.array(z.string().min(1)).default([]).describe("Tool modules to load: paths (relative to the config file) or package names.");
