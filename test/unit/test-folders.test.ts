import { execFile } from "node:child_process";
import { createServer } from "node:http";
import { readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/** The folder decides which vitest project runs a test (vitest.config.ts); these hold the line. */
describe("test folders", () => {
  it("a unit test that opens a listening socket fails, naming its file and test/process/", () => {
    expect(() => createServer().listen(0, "127.0.0.1")).toThrow(
      /test-folders\.test\.ts opened a listening socket: unit tests run in-process only; move it to test\/process\//,
    );
  });

  it("a unit test that starts a child process fails, naming its file", () => {
    expect(() => execFile("true")).toThrow(/test-folders\.test\.ts started a child process \(execFile\)/);
  });

  it("every test file is in test/unit/ or test/process/", () => {
    const root = path.resolve(import.meta.dirname, "..");
    const stray = readdirSync(root, { recursive: true, encoding: "utf8" }).filter(
      (file) => file.endsWith(".test.ts") && !file.startsWith(`unit${path.sep}`) && !file.startsWith(`process${path.sep}`),
    );
    expect(stray).toEqual([]);
  });
});
