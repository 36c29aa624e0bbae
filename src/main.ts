#!/usr/bin/env node
import { runCli } from "./cli.js";
import { messageOf } from "./errors.js";

runCli({
  argv: process.argv.slice(2),
  env: process.env,
  cwd: process.cwd(),
  stdout: (text) => process.stdout.write(`${text}\n`),
  stderr: (text) => process.stderr.write(`${text}\n`),
  stdin: process.stdin,
  terminal: process.stdin.isTTY === true && process.stderr.isTTY === true,
  prompt: (text) => process.stderr.write(text),
}).then(
  (code) => {
    process.exitCode = code;
    // Whatever is still open (a keep-alive socket, a timer) must not keep a finished command alive.
    setTimeout(() => process.exit(code), 1000).unref();
  },
  (error: unknown) => {
    process.stderr.write(`picoclaw: ${messageOf(error)}\n`);
    process.exit(1);
  },
);
