import { accessSync, constants } from "node:fs";

/** Whether `file` is there and this process may run it (how the tests that need a program from Debian find it). */
export function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
