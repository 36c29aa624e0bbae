import { accessSync, constants, lstatSync, readlinkSync } from "node:fs";
import path from "node:path";

/**
 * `tools.exec.sandbox: "bwrap"`: each command under bubblewrap, in
 * namespaces of its own. It sees the system's programs and libraries
 * read-only (/usr and the /bin, /lib… beside it, a few files of /etc), the
 * folders of `sandbox_read_paths` read-only, a private /tmp that vanishes
 * with it, and the workspace, the one host folder it may write. No network
 * but its own loopback unless `sandbox_network`; its own PID namespace, so
 * nothing it starts outlives it; a new session, so it cannot type into the
 * gateway's terminal. Everything else of the host (home folders, the
 * config and its secrets, other workspaces) is not there at all.
 */

/** Folders beside /usr: bound read-only, or made the same symlinks (a merged /usr). */
const SYSTEM = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];
/** What of /etc programs need to run: the loader's cache, users and groups, name lookup, certificates, time zone. */
const ETC = [
  "/etc/ld.so.cache",
  "/etc/ld.so.conf",
  "/etc/ld.so.conf.d",
  "/etc/alternatives",
  "/etc/passwd",
  "/etc/group",
  "/etc/nsswitch.conf",
  "/etc/hosts",
  "/etc/resolv.conf",
  "/etc/ssl",
  "/etc/ca-certificates",
  "/etc/localtime",
  "/etc/timezone",
  "/etc/mime.types",
];

export interface SandboxPlan {
  /** The workspace (symlinks resolved): bound read-write at its own path. */
  root: string;
  /** Where the command starts (inside root). */
  cwd: string;
  network: boolean;
  readPaths: readonly string[];
}

/** The bwrap arguments that run `inner` (`sh -c <line>`) as the plan says. */
export function bwrapArgs(bwrap: string, plan: SandboxPlan, inner: readonly string[]): [string, ...string[]] {
  const args: string[] = ["--die-with-parent", "--new-session", "--unshare-all"];
  if (plan.network) args.push("--share-net");
  for (const folder of SYSTEM) {
    const kind = entryKind(folder);
    if (kind === "symlink") args.push("--symlink", readlinkSync(folder), folder);
    else if (kind === "other") args.push("--ro-bind", folder, folder);
  }
  for (const file of ETC) args.push("--ro-bind-try", file, file);
  for (const extra of plan.readPaths) args.push("--ro-bind-try", extra, extra);
  args.push("--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp");
  args.push("--bind", plan.root, plan.root, "--remount-ro", "/", "--chdir", plan.cwd, "--");
  return [bwrap, ...args, ...inner];
}

function entryKind(file: string): "symlink" | "other" | "missing" {
  try {
    return lstatSync(file).isSymbolicLink() ? "symlink" : "other";
  } catch {
    return "missing";
  }
}

/** Where `bwrap` is on PATH, or undefined. */
export function findBwrap(searchPath: string | undefined): string | undefined {
  for (const folder of (searchPath ?? "/usr/bin:/bin").split(":")) {
    if (!folder) continue;
    const candidate = path.join(folder, "bwrap");
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}
