import path from "node:path";

/**
 * PicoClaw's home folder: `$PICOCLAW_HOME`, else `~/.picoclaw`. When no
 * config file is named or found in the working folder, the config is the
 * home's `config.json`, and relative paths in it (the default workspace
 * `workspace`, the session folder) resolve there: PicoClaw's layout,
 * `~/.picoclaw/config.json` beside `~/.picoclaw/workspace/`.
 */

/** The home's config file name (PicoClaw's). */
export const HOME_CONFIG_FILE = "config.json";

/** The home folder, absolute; undefined when neither PICOCLAW_HOME nor HOME says where it is. */
export function picoclawHome(env: Readonly<Record<string, string | undefined>>, cwd: string): string | undefined {
  const home = env.HOME?.trim() || undefined;
  const given = env.PICOCLAW_HOME?.trim();
  if (given) {
    const expanded = home && (given === "~" || given.startsWith("~/")) ? path.join(home, given.slice(1)) : given;
    return path.resolve(cwd, expanded);
  }
  return home ? path.join(home, ".picoclaw") : undefined;
}
