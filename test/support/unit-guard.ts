/**
 * The unit project's setup file: a test under test/unit/ runs in-process
 * only. Opening a listening socket or starting a child process throws,
 * naming the test file and where it belongs (test/process/), so the folder
 * a test sits in always says what it does.
 */
import childProcess from "node:child_process";
import { syncBuiltinESMExports } from "node:module";
import net from "node:net";
import { expect } from "vitest";

export class UnitTestBoundaryError extends Error {}

const refuse = (what: string) => () => {
  const file = expect.getState().testPath ?? "a unit test";
  throw new UnitTestBoundaryError(`${file} ${what}: unit tests run in-process only; move it to test/process/`);
};

net.Server.prototype.listen = refuse("opened a listening socket") as never;
for (const name of ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"] as const) {
  (childProcess as unknown as Record<string, unknown>)[name] = refuse(`started a child process (${name})`);
}
syncBuiltinESMExports();
