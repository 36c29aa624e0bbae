import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { HOME_CONFIG_FILE } from "./config/home.js";

/**
 * `picoclaw onboard`: PicoClaw's home layout, made where PICOCLAW_HOME (or
 * ~/.picoclaw) says: `config.json` on the built-in model, and a workspace
 * with an AGENT.md (agent `main`) and empty prompt files to fill in. An
 * existing file is never touched, whatever it holds: each is created only
 * if it does not exist (one step, so two onboards at once cannot both write
 * it). Says what it made and what it kept.
 */

const CONFIG = `${JSON.stringify(
  {
    agents: { defaults: { model_name: "local", workspace: "workspace" } },
    model_list: [{ model_name: "local", provider: "builtin", model: "scripted" }],
  },
  null,
  2,
)}\n`;

const AGENT = `---
name: Assistant
description: The workspace's own assistant.
---

You are a helpful assistant working in this workspace. Use the tools you are
given to look at files and to act, and say plainly what you did and what you
could not do.
`;

/** What onboard writes, relative to the home, and the text of each (empty for the prompt files the user fills in). */
const FILES: readonly (readonly [string, string])[] = [
  [HOME_CONFIG_FILE, CONFIG],
  ["workspace/AGENT.md", AGENT],
  ["workspace/SOUL.md", ""],
  ["workspace/USER.md", ""],
  ["workspace/memory/MEMORY.md", ""],
];

export interface OnboardReport {
  home: string;
  created: string[];
  kept: string[];
}

export function onboard(home: string): OnboardReport {
  const report: OnboardReport = { home, created: [], kept: [] };
  for (const [relative, text] of FILES) {
    const file = path.join(home, relative);
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    try {
      writeFileSync(file, text, { flag: "wx", mode: 0o600 });
      report.created.push(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      report.kept.push(file);
    }
  }
  return report;
}
