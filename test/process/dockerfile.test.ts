/**
 * The container, without a container engine (none runs on this machine or
 * in CI): the Dockerfile is read, and its runtime stage's steps are run in a
 * clean folder. The checkout's packed package (`npm pack`, what the image
 * copies: package.json's `files`) and the lockfile go into it, the stage's
 * own `RUN npm ...` lines run there (against the npm registry), and the
 * image's CMD starts with the environment its ENV lines set, under
 * bubblewrap with the whole file system read-only but the /data volume, as
 * PID 1 of its own PID namespace (as `docker run --read-only` without
 * `--init` runs it). Its HEALTHCHECK command then passes, a chat turn with
 * the token is answered and stored in the volume, a run started after a
 * SIGKILL of the first on the same volume has its history, and a SIGTERM
 * to it exits 0. compose.yaml is read too: the config it points the gateway
 * at passes `config check`, and, with a throwaway Postgres cluster, the
 * installed package started as compose starts it keeps a turn in the
 * database and passes compose's healthcheck.
 *
 * Without the registry the install test is skipped, saying why;
 * PICOCLAW_REQUIRE_REGISTRY=1 (set by .ci/run) makes it fail instead. So
 * does a missing `bwrap` with PICOCLAW_REQUIRE_BWRAP=1; without it (and
 * without that variable) the gateway runs without the read-only file system.
 */
import { type ChildProcess, execFile, spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { createServer } from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { postgresTests, startCluster } from "../support/postgres.js";
import { tempDir } from "../support/project.js";
import { waitFor, within } from "../support/wait.js";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "..", "..");
const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { files: string[] };

interface Instruction {
  readonly op: string;
  readonly args: string;
}
interface Stage {
  readonly name: string;
  readonly base: string;
  readonly steps: Instruction[];
}

/** The Dockerfile's stages: continuation lines joined, comments left out, ARG defaults substituted in FROM. */
function readDockerfile(): Stage[] {
  const text = readFileSync(path.join(root, "Dockerfile"), "utf8").replace(/\\\n/g, " ");
  const args = new Map<string, string>();
  const stages: Stage[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const [, op, rest] = /^(\S+)\s+(.*)$/.exec(line)!;
    const instruction = { op: op!.toUpperCase(), args: rest!.replace(/\s+/g, " ").trim() };
    if (instruction.op === "ARG" && stages.length === 0) {
      const [name, value] = instruction.args.split("=");
      args.set(name!, value ?? "");
    } else if (instruction.op === "FROM") {
      const [base, , name] = instruction.args.split(" ");
      stages.push({ name: name ?? String(stages.length), base: base!.replace(/\$\{(\w+)\}/g, (_, key: string) => args.get(key) ?? ""), steps: [] });
    } else {
      stages.at(-1)!.steps.push(instruction);
    }
  }
  return stages;
}

const stages = readDockerfile();
const build = stages.find((stage) => stage.name === "build")!;
const runtime = stages.at(-1)!;
const all = (stage: Stage, op: string) => stage.steps.filter((step) => step.op === op).map((step) => step.args);
const last = (stage: Stage, op: string) => all(stage, op).at(-1);
/** An exec-form instruction's argument list (`CMD ["node", ...]`). */
const execForm = (args: string) => JSON.parse(args.replace(/^CMD /, "")) as string[];

/** ENV lines as a map (KEY=value pairs; the values hold no spaces). */
function imageEnv(): Map<string, string> {
  const env = new Map<string, string>();
  for (const args of all(runtime, "ENV")) {
    for (const pair of args.split(" ")) {
      const at = pair.indexOf("=");
      env.set(pair.slice(0, at), pair.slice(at + 1));
    }
  }
  return env;
}

describe("the Dockerfile", () => {
  it("builds in one stage and runs in another on the same Node 20 base, as a non-root user, the gateway itself (not npm start), on port 18790", () => {
    expect(stages.map((stage) => stage.name)).toEqual(["build", "runtime"]);
    expect(build.base).toMatch(/^node:20[.-]/);
    expect(runtime.base).toBe(build.base);
    expect(all(build, "RUN").join(" && ")).toMatch(/npm ci .*&& .*npm run build/);
    expect(all(runtime, "RUN")[0]).toMatch(/^npm ci --omit=dev --ignore-scripts/);
    expect(last(runtime, "USER")).toBe("node");
    expect(last(runtime, "EXPOSE")).toBe("18790");
    expect(last(runtime, "VOLUME")).toBe('["/data"]');
    expect(execForm(last(runtime, "CMD")!)).toEqual(["node", "dist/main.js", "gateway"]);
    expect(last(runtime, "HEALTHCHECK")).toContain("/health");
    const env = imageEnv();
    expect(env.get("PICOCLAW_GATEWAY_HOST")).toBe("0.0.0.0");
    expect(env.has("PICOCLAW_GATEWAY_TOKEN"), "the token is the operator's, never the image's").toBe(false);
    for (const [key, value] of env) if (value.startsWith("/")) expect(value, `${key} points into the volume`).toMatch(/^\/data(\/|$)/);
  });

  it("copies from the checkout only what exists and .dockerignore lets through, and the runtime stage ships exactly package.json's files", () => {
    const ignored = readFileSync(path.join(root, ".dockerignore"), "utf8")
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "" && !line.startsWith("#"));
    for (const stage of stages) {
      for (const args of all(stage, "COPY")) {
        if (args.startsWith("--from=")) continue;
        const sources = args.split(" ").slice(0, -1);
        for (const source of sources) {
          expect(existsSync(path.join(root, source)), `${stage.name}: COPY ${source} exists`).toBe(true);
          expect(ignored, `${stage.name}: COPY ${source} is not in .dockerignore`).not.toContain(source);
        }
      }
    }
    // What each COPY puts into /app: its destination, or into a folder (`./`) its sources' names.
    const shipped = all(runtime, "COPY")
      .map((args) => args.replace(/^--from=\S+ /, "").split(" "))
      .filter((parts) => !parts.includes("package-lock.json"))
      .flatMap((parts) =>
        parts.at(-1)!.endsWith("/") ? parts.slice(0, -1).map((source) => path.posix.basename(source)) : [path.posix.normalize(parts.at(-1)!)],
      );
    expect(shipped.sort()).toEqual([...pkg.files].sort());
    expect(all(runtime, "COPY")).toContain("--from=build /src/dist ./dist");
  });
});

/** The parts of a compose service these checks read. */
interface Service {
  readonly build?: string;
  readonly read_only?: boolean;
  readonly init?: boolean;
  readonly hostname?: string;
  readonly env_file?: string;
  readonly environment: Record<string, string>;
  readonly depends_on?: unknown;
  readonly volumes?: string[];
  readonly healthcheck: { readonly test: string[] };
}

describe("compose.yaml", () => {
  const compose = parse(readFileSync(path.join(root, "compose.yaml"), "utf8")) as { services: Record<string, Service> };
  const gateway = compose.services.gateway!;

  it("runs the gateway read-only with an init and a fixed host name, its token from .env, after Postgres is healthy, both with healthchecks", () => {
    expect(gateway.build).toBe(".");
    expect(gateway.read_only).toBe(true);
    expect(gateway.init).toBe(true);
    expect(gateway.hostname, "a fixed host name, which the session folder's lock names").toMatch(/\S/);
    expect(gateway.env_file).toBe(".env");
    expect(gateway.environment.PICOCLAW_GATEWAY_TOKEN, "the token stays in .env, out of the file").toBeUndefined();
    expect(gateway.depends_on).toEqual({ postgres: { condition: "service_healthy" } });
    expect(gateway.volumes).toEqual(["picoclaw-data:/data"]);
    expect(gateway.healthcheck.test.join(" ")).toContain("/ready");
    expect(compose.services.postgres!.healthcheck.test.join(" ")).toContain("pg_isready");
    expect(gateway.environment.DATABASE_URL).toMatch(/^postgres:\/\/picoclaw:\$\{POSTGRES_PASSWORD:\?[^}]+\}@postgres:5432\/picoclaw$/);
  });

  it("points the gateway at a config the image ships, which keeps sessions in Postgres at ${DATABASE_URL} and passes config check", async () => {
    const config = gateway.environment.PICOCLAW_CONFIG!;
    expect(config).toMatch(/^\/app\//);
    const inCheckout = path.join(root, config.slice("/app/".length));
    expect(pkg.files, "the config is in a folder the package ships").toContain(config.split("/")[2]);
    const parsed = JSON.parse(readFileSync(inCheckout, "utf8"));
    expect(parsed.session).toEqual({ store: "postgres", postgres: { url: "${DATABASE_URL}" } });
    const volume = tempDir("picoclaw-compose-");
    const env: Record<string, string> = { PATH: process.env.PATH!, HOME: volume, DATABASE_URL: "postgres://picoclaw:hunter2@postgres:5432/picoclaw" };
    for (const [key, value] of imageEnv()) env[key] = value.replace(/^\/data/, volume);
    env.PICOCLAW_CONFIG = inCheckout;
    const { stdout, stderr } = await run(process.execPath, [path.join(root, "dist", "main.js"), "config", "check"], { cwd: root, env });
    expect(stderr).toContain(`config OK: ${inCheckout}`);
    expect(stdout).toContain('"store": "postgres"');
    expect(stdout + stderr, "the database password never shows").not.toContain("hunter2");
  });
});

/** Whether the npm registry answers, and if not, why. */
async function registry(): Promise<string | undefined> {
  try {
    await run("npm", ["ping"], { timeout: 20_000, env: npmEnv() });
    return undefined;
  } catch (error) {
    return `the npm registry cannot be reached (npm ping: ${String((error as Error).message).split("\n")[0]})`;
  }
}

/** npm's environment without what an outer npm (the one running these tests) set. */
function npmEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !/^npm_/i.test(key)) env[key] = value;
  return { ...env, npm_config_update_notifier: "false", npm_config_fund: "false", npm_config_audit: "false" };
}

const unreachable = await registry();
const required = process.env.PICOCLAW_REQUIRE_REGISTRY === "1";
if (unreachable && !required)
  console.warn(`dockerfile.test.ts: skipping the image's install and run: ${unreachable} (PICOCLAW_REQUIRE_REGISTRY=1 makes this a failure)`);
const postgres = postgresTests();
const bwrap = spawnSync("bwrap", ["--version"]).status === 0;
if (!bwrap && process.env.PICOCLAW_REQUIRE_BWRAP !== "1")
  console.warn("dockerfile.test.ts: no bwrap on PATH: the gateway runs without a read-only file system");

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The pid, seen from here, of bwrap's child (the gateway, PID 1 inside), or the child itself without bwrap. */
function gatewayPid(child: ChildProcess): number | undefined {
  if (!bwrap) return child.pid;
  const children = readdirSync(`/proc/${child.pid}/task`).flatMap((task) =>
    readFileSync(`/proc/${child.pid}/task/${task}/children`, "utf8").trim().split(/\s+/).filter(Boolean),
  );
  return children.length > 0 ? Number(children[0]) : undefined;
}

/** Folders made for the image's install, which outlives one test: removed after the last. */
const madeFolders: string[] = [];
const folder = (prefix: string) => {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  madeFolders.push(dir);
  return dir;
};
let installing: Promise<string> | undefined;

/** The runtime stage's /app: what its COPY lines bring (the packed package, the lockfile), then its RUN npm line as written. */
function installedImage(): Promise<string> {
  installing ??= (async () => {
    const packed = folder("picoclaw-pack-");
    const { stdout: tarball } = await run("npm", ["pack", root, "--ignore-scripts", "--silent", "--pack-destination", packed], { cwd: packed, env: npmEnv() });
    const app = folder("picoclaw-image-");
    await run("tar", ["xzf", path.join(packed, tarball.trim()), "--strip-components=1", "-C", app]);
    copyFileSync(path.join(root, "package-lock.json"), path.join(app, "package-lock.json"));
    await run("sh", ["-c", all(runtime, "RUN")[0]!], { cwd: app, env: { ...npmEnv(), npm_config_cache: folder("picoclaw-npm-cache-") } });
    return app;
  })();
  return installing;
}

(unreachable && !required ? describe.skip : describe)("the runtime stage's steps, in a clean folder", () => {
  afterAll(() => {
    for (const dir of madeFolders) rmSync(dir, { recursive: true, force: true });
  });

  it("npm ci --omit=dev installs the packed package, and its CMD on a read-only root, as PID 1, passes the HEALTHCHECK, answers a turn with the token, keeps it in /data across a kill and a restart, and exits 0 on SIGTERM", {
    timeout: 240_000,
  }, async () => {
    if (unreachable) throw new Error(`PICOCLAW_REQUIRE_REGISTRY=1 but ${unreachable}`);
    if (!bwrap && process.env.PICOCLAW_REQUIRE_BWRAP === "1") throw new Error("PICOCLAW_REQUIRE_BWRAP=1 but there is no bwrap on PATH for the read-only root");
    // The stage's RUN lines: its npm commands as written, and the volume's folder.
    const runs = all(runtime, "RUN");
    expect(runs.map((line) => (line.startsWith("npm ") ? "npm" : line))).toEqual(["npm", "mkdir -p /data && chown node:node /data"]);
    const app = await installedImage();
    for (const file of pkg.files) expect(existsSync(path.join(app, file)), `the packed package holds ${file}`).toBe(true);
    expect(existsSync(path.join(app, "node_modules", "hono", "package.json"))).toBe(true);
    expect(existsSync(path.join(app, "node_modules", "vitest")), "no dev dependency is installed").toBe(false);
    const volume = tempDir("picoclaw-volume-");

    // The CMD, with the ENV lines (/data is the volume), the token from outside and a home it cannot write to.
    const token = "container-token-7f3a9";
    const port = await freePort();
    const env: Record<string, string> = { PATH: process.env.PATH!, HOME: app, PICOCLAW_GATEWAY_TOKEN: token };
    for (const [key, value] of imageEnv()) env[key] = value.replace(/^\/data/, volume);
    env.PICOCLAW_GATEWAY_PORT = String(port);
    const [command, ...args] = execForm(last(runtime, "CMD")!);
    expect(command).toBe("node");
    const health = execForm(last(runtime, "HEALTHCHECK")!.replace(/^.*?CMD /, "CMD "));
    expect(health[0]).toBe("node");
    const jail = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--as-pid-1", "--bind", volume, volume, "--chdir", app];
    const started: ChildProcess[] = [];
    /** `docker run` of the image on this volume: the CMD in the jail, once it listens. */
    const startImage = async () => {
      const child = bwrap
        ? spawn("bwrap", [...jail, process.execPath, ...args], { env, stdio: ["ignore", "pipe", "pipe"] })
        : spawn(process.execPath, args, { cwd: app, env, stdio: ["ignore", "pipe", "pipe"] });
      started.push(child);
      const gateway = { child, output: "", exited: new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code))) };
      child.stdout!.on("data", (chunk: Buffer) => (gateway.output += chunk.toString()));
      child.stderr!.on("data", (chunk: Buffer) => (gateway.output += chunk.toString()));
      await waitFor(
        "the gateway in the image folder to listen",
        () => gateway.output.includes(`listening on http://0.0.0.0:${port}`) || child.exitCode !== null,
        {
          instead: () => gateway.output,
        },
      );
      expect(child.exitCode, gateway.output).toBeNull();
      if (bwrap) expect(readFileSync(`/proc/${gatewayPid(child)}/status`, "utf8"), "the gateway is PID 1 of its namespace").toMatch(/^NSpid:\s+\d+\s+1$/m);
      return gateway;
    };
    const base = `http://127.0.0.1:${port}`;
    const chat = (message: string, auth = true) =>
      fetch(`${base}/v1/chat`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(auth ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify({ message }),
      });
    try {
      const first = await startImage();
      // The HEALTHCHECK's own command, as the engine runs it: exit 0.
      await run(process.execPath, health.slice(1), { env });
      expect((await chat("hi", false)).status).toBe(401);
      const res = await chat("hello from the container");
      expect(res.status).toBe(200);
      expect(((await res.json()) as { reply: string }).reply).toContain("You said: hello from the container");
      expect(readdirSync(path.join(volume, "sessions"))).toContain("agent_main_http_default.jsonl");
      expect(readFileSync(path.join(volume, "sessions", "agent_main_http_default.jsonl"), "utf8")).toContain("hello from the container");
      expect(existsSync(path.join(volume, "workspace"))).toBe(true);

      // docker kill, then the container again on the same volume: its lock (PID 1's, a previous run's) is taken over, the history kept.
      process.kill(gatewayPid(first.child)!, "SIGKILL");
      await within("the killed gateway to exit", first.exited);
      expect(readFileSync(path.join(volume, "sessions", "picoclaw.lock"), "utf8"), "the killed run left its lock").toContain('"pid":');
      const second = await startImage();
      const history = await fetch(`${base}/v1/sessions/${encodeURIComponent("agent:main:http:default")}/history`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(history.status).toBe(200);
      expect(await history.text()).toContain("hello from the container");

      // docker stop: SIGTERM to the gateway (PID 1 inside), and exit 0.
      process.kill(gatewayPid(second.child)!, "SIGTERM");
      expect(await within("the gateway to exit after SIGTERM", second.exited)).toBe(0);
      expect(first.output + second.output).not.toContain(token);
      // Stopped, the same HEALTHCHECK fails.
      await expect(run(process.execPath, health.slice(1), { env })).rejects.toMatchObject({ code: 1 });
    } finally {
      for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
  });
  (postgres.run ? it : it.skip)(
    "compose's gateway: the image's config/compose.json with DATABASE_URL keeps a turn in Postgres, and compose's healthcheck (/ready) passes",
    { timeout: 240_000 },
    async () => {
      if (unreachable) throw new Error(`PICOCLAW_REQUIRE_REGISTRY=1 but ${unreachable}`);
      const app = await installedImage();
      const cluster = await startCluster(postgres.found);
      const volume = folder("picoclaw-compose-volume-");
      const port = await freePort();
      const token = "compose-token-51c2";
      const gateway = (parse(readFileSync(path.join(root, "compose.yaml"), "utf8")) as { services: Record<string, Service> }).services.gateway!;
      const env: Record<string, string> = { PATH: process.env.PATH!, HOME: app, PICOCLAW_GATEWAY_TOKEN: token, DATABASE_URL: await cluster.database() };
      for (const [key, value] of imageEnv()) env[key] = value.replace(/^\/data/, volume);
      env.PICOCLAW_CONFIG = gateway.environment.PICOCLAW_CONFIG!.replace(/^\/app/, app);
      env.PICOCLAW_GATEWAY_PORT = String(port);
      const child = spawn(process.execPath, execForm(last(runtime, "CMD")!).slice(1), { cwd: app, env, stdio: ["ignore", "pipe", "pipe"] });
      let output = "";
      child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
      child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
      try {
        await waitFor("compose's gateway to listen", () => output.includes(`listening on http://0.0.0.0:${port}`) || child.exitCode !== null, {
          instead: () => output,
        });
        expect(child.exitCode, output).toBeNull();
        const [kind, ...check] = gateway.healthcheck.test;
        expect(kind).toBe("CMD");
        expect(check[0]).toBe("node");
        await run(
          process.execPath,
          check.slice(1).map((arg) => arg.replace(":18790/", `:${port}/`)),
          { env },
        );
        const res = await fetch(`http://127.0.0.1:${port}/v1/chat`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
          body: JSON.stringify({ message: "kept in postgres" }),
        });
        expect(res.status).toBe(200);
        const db = new pg.Client({ connectionString: env.DATABASE_URL });
        await db.connect();
        try {
          const { rows } = await db.query("SELECT count(*)::int AS n FROM picoclaw_messages WHERE message::text LIKE '%kept in postgres%'");
          expect(rows[0].n).toBeGreaterThan(0);
        } finally {
          await db.end();
        }
        expect(existsSync(path.join(volume, "sessions")), "no session folder with the Postgres store").toBe(false);
        child.kill("SIGTERM");
        expect(await within("compose's gateway to exit after SIGTERM", exited)).toBe(0);
        expect(output).not.toContain(env.DATABASE_URL);
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
        await cluster.remove();
      }
    },
  );
});
