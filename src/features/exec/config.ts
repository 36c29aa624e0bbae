import { z } from "zod";
import { patternList } from "../../config/schema.js";

/** The exec tool's section: PicoClaw's `tools.exec`, with safer defaults and our bounds (README, "exec"). */

const patterns = (what: string) => patternList.describe(what);

export const SANDBOXES = ["none", "bwrap"] as const;

export const execSection = z
  .strictObject({
    // On, as in PicoClaw, but each command waits for a person's yes (its approval policy is "ask").
    enabled: z.boolean().default(true),
    enable_deny_patterns: z
      .boolean()
      .default(true)
      .describe("Refuse commands matching the deny patterns (PicoClaw's, ours, custom_deny_patterns). false switches all of them off."),
    custom_deny_patterns: patterns("More regexes a command (or any command in it) must not match."),
    custom_allow_patterns: patterns("Regexes: a command line matching one skips the deny patterns (PicoClaw's exemption)."),
    allowed_commands: z
      .array(z.string().regex(/^[A-Za-z0-9._+-]+$/, "expected a program name (no path, no spaces)"))
      .default([])
      .describe(
        "Allowlist mode when not empty: every program a command line runs (each command of a pipeline or chain, inside sh -c too) must be one of these names.",
      ),
    allow_remote: z.boolean().default(false).describe("Let turns that came from a chat channel (channel_list) run commands."),
    timeout_seconds: z
      .int()
      .min(0)
      .max(86_400)
      .default(60)
      .describe("A command is killed (its whole process group) after this long; 0: only the turn's own end (its deadline, /stop) stops it."),
    max_output_bytes: z
      .int()
      .min(1024)
      .max(16 * 1024 * 1024)
      .default(10_000)
      .describe("The most output a result holds: the start and the end are kept, the middle cut (and said)."),
    sandbox: z
      .enum(SANDBOXES)
      .default("none")
      .describe('"bwrap": run each command under bubblewrap, the workspace its only writable folder, without network (start-up fails when bwrap is missing).'),
    sandbox_network: z.boolean().default(false).describe("With sandbox bwrap: let commands reach the network."),
    sandbox_read_paths: z
      .array(z.string().regex(/^\//, "expected an absolute path"))
      .default([])
      .describe("With sandbox bwrap: more host folders or files commands may read (read-only), besides the system's programs and libraries."),
  })
  .prefault({});

export type ExecSection = z.output<typeof execSection>;
