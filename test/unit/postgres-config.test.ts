/** The config of store postgres (README, "Sessions in Postgres"): its keys and bounds, and its connection string kept secret. */
import { describe, expect, it } from "vitest";
import { bootstrap } from "../../src/bootstrap.js";
import { maskSecrets } from "../../src/config/mask.js";
import { loadConfig } from "../../src/house.js";
import { problemsOf, recordingLogger, writeProject } from "../support/project.js";

const URL_WITH_PASSWORD = "postgres://bot:pa55-w0rd-xyz@db.example:5432/picoclaw";

describe("session.postgres", () => {
  it("takes the url and gives every bound its default", () => {
    const loaded = loadConfig({ env: {}, cwd: writeProject({ config: { session: { store: "postgres", postgres: { url: URL_WITH_PASSWORD } } } }) });
    expect((loaded.config.session as Record<string, unknown>).postgres).toEqual({
      url: URL_WITH_PASSWORD,
      pool_size: 10,
      lock_connections: 64,
      connect_timeout_ms: 5_000,
      query_timeout_ms: 30_000,
      lock_timeout_ms: 900_000,
      ready_timeout_ms: 2_000,
    });
  });

  it("a bound out of range or an unknown key is a config error naming its path", () => {
    const problems = problemsOf(() =>
      loadConfig({ env: {}, cwd: writeProject({ config: { session: { store: "postgres", postgres: { url: "x", pool_size: 0, pool: 3 } } } }) }),
    );
    expect(problems.join("\n")).toContain("session.postgres.pool_size");
    expect(problems.join("\n")).toContain("pool");
  });

  it("store postgres without session.postgres.url stops start-up, naming the key", () => {
    const loaded = loadConfig({ env: {}, cwd: writeProject({ config: { session: { store: "postgres" } } }) });
    expect(problemsOf(() => bootstrap(loaded, { logger: recordingLogger() }))).toEqual([
      'session.postgres.url: required with session.store "postgres" (e.g. "${DATABASE_URL}")',
    ]);
  });

  it("the connection string and its password are secrets: masked, whether written in the file or taken from ${DATABASE_URL}", () => {
    for (const [url, env] of [
      [URL_WITH_PASSWORD, {}],
      ["${DATABASE_URL}", { DATABASE_URL: URL_WITH_PASSWORD }],
    ] as const) {
      const loaded = loadConfig({ env, cwd: writeProject({ config: { session: { store: "postgres", postgres: { url } } } }) });
      expect(loaded.secrets).toContain("pa55-w0rd-xyz");
      const shown = JSON.stringify(maskSecrets(loaded.config, loaded));
      expect(shown).not.toContain("pa55-w0rd-xyz");
      expect(shown).toContain('"store":"postgres"');
    }
  });

  it("opening the store makes no connection: a runtime made in code on a database nobody reaches is made, and closes, without one", () => {
    const loaded = loadConfig({ env: {}, cwd: writeProject({ config: { session: { store: "postgres", postgres: { url: URL_WITH_PASSWORD } } } }) });
    const { runtime } = bootstrap(loaded, { logger: recordingLogger() });
    expect(runtime.sessionKeys()).toEqual([]);
    return runtime.close(0);
  });
});
