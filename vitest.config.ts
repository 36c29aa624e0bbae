import { defineConfig } from "vitest/config";
import { isHonoModule, withFetchClasses } from "./scripts/fetch-classes.mjs";

/**
 * Two projects, both run by `npm test` (`vitest run`); one alone with
 * `vitest run --project unit` or `--project process`. The folder decides:
 *
 * - `test/process/`: tests that start real processes (the gateway as
 *   `npm start` or `node dist/main.js`, MCP server children, a tsx script) or
 *   open real sockets (the fake model servers on 127.0.0.1, HTTP MCP
 *   servers, the node server, Chromium). The OS schedules these, so they are
 *   the ones a busy machine slows down; they run one file at a time.
 * - `test/unit/`: everything in-process only (hono's app.request, in-memory
 *   models, injected clocks and sleeps).
 *
 * `test/support/unit-guard.ts` holds the line: a unit test that starts a
 * process or listens on a port fails there, naming the file.
 */
export default defineConfig({
  // hono runs on the gateway's own Headers, Request and Response, here as in the build (scripts/fetch-classes.mjs):
  // vitest hands hono's modules to this plugin instead of loading them as they are.
  plugins: [
    {
      name: "hono-on-our-fetch-classes",
      enforce: "pre",
      transform: (code: string, id: string) => (isHonoModule(id) ? { code: withFetchClasses(code), map: null } : undefined),
    },
  ],
  test: {
    server: { deps: { inline: [/[\\/]node_modules[\\/]hono[\\/]/] } },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    projects: [
      {
        extends: true,
        test: { name: "unit", include: ["test/unit/**/*.test.ts"], setupFiles: ["test/support/unit-guard.ts"] },
      },
      {
        extends: true,
        test: {
          name: "process",
          include: ["test/process/**/*.test.ts"],
          // One file at a time: these tests mostly wait on processes and sockets, so this
          // costs little time and keeps them from starving each other of CPU.
          maxWorkers: 1,
        },
      },
    ],
  },
});
