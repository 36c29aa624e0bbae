import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Browser, type Page, chromium } from "playwright-core";
import { expect } from "vitest";
import { FakeModelServer } from "./fake-openai.js";
import { type ProjectFiles, openaiConfig, writeProject } from "./project.js";
import { scriptedModel } from "./scripted-openai.js";
import { eventually, within } from "./wait.js";
import { executable } from "./executable.js";

/**
 * Real-browser tests of the chat page: Debian's Chromium driven by
 * playwright-core, against the real gateway process. Chromium is the
 * executable `CHROMIUM_PATH` names, else `chromium` on PATH; without one the
 * tests skip with the reason printed, unless PICOCLAW_REQUIRE_BROWSER=1
 * (CI), where they fail.
 */

const root = path.resolve(import.meta.dirname, "..", "..");

/** Flags for a headless Chromium on a machine without outside network: no GPU, no background calls home. */
export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Where Chromium is, or why it cannot be used. */
export function findChromium(env: NodeJS.ProcessEnv = process.env): { path: string } | { reason: string } {
  const named = env.CHROMIUM_PATH;
  if (named) return executable(named) ? { path: named } : { reason: `CHROMIUM_PATH=${named} is not an executable file` };
  for (const dir of (env.PATH ?? "").split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, "chromium");
    if (executable(candidate)) return { path: candidate };
  }
  return { reason: "no Chromium: set CHROMIUM_PATH, or install Debian's package (apt-get install -y chromium)" };
}

/** Whether the browser tests run here: skipped (with the reason printed) only where Chromium is missing and not required. */
export function browserTests(env: NodeJS.ProcessEnv = process.env): { run: boolean; chromium: { path: string } | { reason: string } } {
  const found = findChromium(env);
  const required = env.PICOCLAW_REQUIRE_BROWSER === "1";
  if ("reason" in found && !required) console.log(`skipping the browser tests: ${found.reason}`);
  return { run: "path" in found || required, chromium: found };
}

/** Launches Chromium (playwright gives each launch a fresh profile in a temporary folder), or fails saying why it cannot. */
export async function launchChromium(found: { path: string } | { reason: string }): Promise<Browser> {
  if ("reason" in found) throw new Error(`PICOCLAW_REQUIRE_BROWSER=1, and ${found.reason}`);
  return chromium.launch({ executablePath: found.path, headless: true, args: CHROMIUM_FLAGS });
}

/** A folder for this run's screenshots, under the OS's temporary folder, printed so a person can look. */
export function screenshotFolder(name: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), `picoclaw-${name}-`));
  console.log(`screenshots of ${name}: ${dir}`);
  return dir;
}

export interface GatewayProcess {
  url: string;
  output: { text: string };
  /** SIGTERM, and the exit code once it exited. */
  stop(): Promise<number | null>;
}

/** `node dist/main.js gateway` on a project's config, on a free port; resolves once it listens. */
export async function startGatewayProcess(project: string, env: Record<string, string> = {}): Promise<GatewayProcess> {
  const child: ChildProcess = spawn(process.execPath, [path.join(root, "dist", "main.js"), "gateway"], {
    cwd: project,
    env: { ...process.env, PICOCLAW_CONFIG: path.join(project, "picoclaw.config.json"), PICOCLAW_GATEWAY_PORT: "0", PICOCLAW_LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output = { text: "" };
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      output.text += chunk.toString();
      const match = /listening on (http:\/\/[^\s]+)/.exec(output.text);
      if (match) resolve(match[1]!);
    });
    child.stderr!.on("data", (chunk: Buffer) => (output.text += chunk.toString()));
    void exited.then((code) => reject(new Error(`the gateway exited with ${code} before listening:\n${output.text}`)));
  });
  const url = await within('the gateway\'s "listening on" line', listening, { instead: () => `its output so far:\n${output.text}` }).catch((error) => {
    child.kill("SIGKILL");
    throw error;
  });
  return {
    url,
    output,
    stop: async () => {
      child.kill("SIGTERM");
      return within("the gateway to exit on SIGTERM", exited, { instead: () => `its output:\n${output.text}` });
    },
  };
}

/** Everything a browser test of the page needs: a scripted model, the gateway on a project of its own, Chromium, a screenshot folder. */
export interface PageRig {
  model: FakeModelServer;
  gateway: GatewayProcess;
  browser: Browser;
  shots: string;
  /** Stops it all (the gateway must exit 0) and removes the project. */
  close(): Promise<void>;
}

/**
 * Starts a rig: `files.config` is merged over a config whose model is the
 * scripted fake (`fake`); its own `model_list` entries come after the fake's
 * (an agent's AGENT.md `model: local` needs the built-in one listed there).
 */
export async function startPageRig(name: string, found: { path: string } | { reason: string }, files: ProjectFiles = {}): Promise<PageRig> {
  // Chromium first: where it is missing (and required), nothing else is started.
  const browser = await launchChromium(found);
  const model = await FakeModelServer.start(scriptedModel);
  const base = openaiConfig(model.url);
  const own = (files.config ?? {}) as { model_list?: unknown[] };
  const config = { ...base, ...own, model_list: [...(base.model_list as unknown[]), ...(own.model_list ?? [])] };
  const project = writeProject({ ...files, config }, mkdtempSync(path.join(tmpdir(), `picoclaw-${name}-project-`)));
  const cleanUp = async () => {
    await browser.close();
    await model.close();
    rmSync(project, { recursive: true, force: true });
  };
  let gateway: GatewayProcess;
  try {
    gateway = await startGatewayProcess(project);
  } catch (error) {
    await cleanUp();
    throw error;
  }
  return {
    model,
    gateway,
    browser,
    shots: screenshotFolder(name),
    close: async () => {
      // The page's streams first, so the gateway stops with no client waiting.
      await browser.close();
      const code = await gateway.stop();
      await cleanUp();
      if (code !== 0) throw new Error(`the gateway exited with ${code}:\n${gateway.output.text}`);
    },
  };
}

/** The little of the page's DOM that `viewOf` reads (the function runs in the page; the tests' type-check has no DOM). */
interface PageElement {
  className: string;
  classList: { contains(name: string): boolean };
  innerText: string;
  dataset: Record<string, string | undefined>;
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): Iterable<PageElement>;
  getAttribute(name: string): string | null;
  checkVisibility(): boolean;
}
declare const document: { querySelectorAll(selector: string): Iterable<PageElement>; getElementById(id: string): PageElement | null };

/** What a person sees of the page, read from what is visible. */
export interface PageView {
  /** The transcript's items: their kind (`user`, `agent`, `tool-output`, `command`, `note`, `error`, `tools`) and text. */
  transcript: { kind: string; text: string; streaming: boolean }[];
  /** Tool chips, in order: name and status (`running`, `ok`, `error`, `done`). */
  chips: { name: string; status: string }[];
  /** The plan panel: phases and their tasks with the status each checkbox draws. */
  plan: { phase: string; tasks: { text: string; status: string; checked: string }[] }[];
  planEmpty: boolean;
  subagents: string[];
  status: string;
}

export function viewOf(page: Page): Promise<PageView> {
  return page.evaluate(() => {
    const visible = (element: PageElement) => element.checkVisibility();
    const all = (selector: string) => [...document.querySelectorAll(selector)].filter(visible);
    // biome-ignore lint/performance/useDomNodeTextContent: the text as rendered (what a person sees) is the point
    const text = (element: PageElement | null) => element?.innerText.trim() ?? "";
    return {
      transcript: all("#transcript > li").map((li) => ({
        kind: ["user", "agent", "tool-output", "command", "note", "error", "tools"].find((kind) => li.classList.contains(kind)) ?? li.className,
        text: li.classList.contains("tools") ? text(li) : text(li.querySelector(".text")),
        streaming: li.classList.contains("streaming"),
      })),
      chips: [...document.querySelectorAll("#transcript .chip")].map((chip) => ({
        name: text(chip.querySelector(".chip-name")),
        status: chip.dataset.status ?? "",
      })),
      plan: [...document.querySelectorAll("#plan .phase")].map((phase) => ({
        phase: text(phase.querySelector(".phase-name")),
        tasks: [...phase.querySelectorAll(".task")].map((task) => ({
          text: text(task.querySelector(".task-text")),
          status: task.dataset.status ?? "",
          checked: task.querySelector(".box")?.getAttribute("aria-checked") ?? "",
        })),
      })),
      planEmpty: visible(document.getElementById("plan-empty")!),
      subagents: [...document.querySelectorAll("#subagent-list .subagent-label")].map((label) => text(label)),
      status: text(document.getElementById("status")),
    };
  });
}

/**
 * Sends `message` to a session from another client (`POST /v1/chat`, not
 * through the page) and waits until the page shows its reply, which only
 * the session's event stream brings there. That stream keeps its order,
 * and a turn waits for the one running on its session, so by then the page
 * has shown everything the session delivered before: a check that
 * something did not come can be made at once, where a pause could not
 * catch what comes after it.
 */
export async function answeredElsewhere(page: Page, gateway: GatewayProcess, to: { agent: string; session: string }, message: string): Promise<string> {
  const res = await fetch(`${gateway.url}/v1/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ ...to, message }),
  });
  expect(res.status).toBe(200);
  const { reply } = (await res.json()) as { reply: string };
  await eventually(async () => expect((await viewOf(page)).transcript.at(-1)?.text).toBe(reply));
  return reply;
}
