import { configDefaults, defineConfig } from "vitest/config";

/**
 * Two projects, both run by `npm test` (`vitest run`); one alone with
 * `vitest run --project unit` or `--project process`.
 *
 * - `process`: test files that start real processes (the gateway as
 *   `npm start` or `node dist/main.js`, MCP server children, a tsx script) or
 *   open real sockets (the fake model servers on 127.0.0.1, HTTP MCP
 *   servers, the node server). The OS schedules these, so they are the ones a
 *   busy machine slows down.
 * - `unit`: everything else, in-process only (hono's app.request, in-memory
 *   models, injected clocks and sleeps).
 *
 * A new test file that starts a process or listens on a port belongs in
 * PROCESS_TESTS below.
 */
const PROCESS_TESTS = [
  // real processes
  "test/process.test.ts",
  "test/start-script.test.ts",
  "test/loaded-modules.test.ts",
  "test/process-mcp.test.ts",
  "test/process-telegram.test.ts",
  "test/process-sessions.test.ts",
  "test/mcp-restarts.test.ts",
  "test/mcp-servers.test.ts",
  "test/mcp-runtime.test.ts",
  "test/mcp-gateway.test.ts",
  "test/mcp-http.test.ts",
  "test/mcp-message-size.test.ts",
  // fetches and builds the reference todo tool (npm pack, esbuild)
  "test/todo-reference.test.ts",
  // real sockets: fake model servers on 127.0.0.1, the node server
  "test/anthropic-provider.test.ts",
  "test/context-window.test.ts",
  "test/anthropic-cache.test.ts",
  "test/anthropic-thinking.test.ts",
  "test/images.test.ts",
  "test/openai-reasoning.test.ts",
  "test/event-streams-server.test.ts",
  "test/fallbacks.test.ts",
  "test/gateway-models.test.ts",
  "test/gateway-openai.test.ts",
  "test/hostile-model-servers.test.ts",
  "test/model-catalog.test.ts",
  "test/model-failures.test.ts",
  "test/model-connections.test.ts",
  "test/openai-provider.test.ts",
  "test/plugins.test.ts",
  "test/picoclaw-config.test.ts",
  "test/secrets.test.ts",
  "test/plugins-anywhere.test.ts",
  "test/sdk-conformance.test.ts",
  "test/server.test.ts",
  "test/server-limits.test.ts",
  "test/sessions-repair.test.ts",
  "test/streaming-server.test.ts",
  "test/subagents-gateway.test.ts",
  "test/todo-gateway.test.ts",
  "test/todo-phases-gateway.test.ts",
  // a fake Telegram Bot API on 127.0.0.1
  "test/telegram.test.ts",
  // the chat page in Chromium, against the real gateway process
  "test/web-page.test.ts",
  "test/web-access.test.ts",
  "test/web-controls.test.ts",
];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...PROCESS_TESTS],
        },
      },
      {
        extends: true,
        test: {
          name: "process",
          include: PROCESS_TESTS,
          // One file at a time: these tests mostly wait on processes and sockets, so this
          // costs little time and keeps them from starving each other of CPU.
          maxWorkers: 1,
        },
      },
    ],
  },
});
