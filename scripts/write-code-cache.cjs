// A build step (scripts/build.mjs runs it): starts the gateway from dist/
// with the code cache recording (src/code-cache.ts), in a folder of its own
// that it removes at exit, asks it for /health once it listens, writes
// dist/code-cache/ with what that start compiled, and exits.
"use strict";
const { mkdirSync, mkdtempSync, rmSync, writeFileSync } = require("node:fs");
const http = require("node:http");
const { tmpdir } = require("node:os");
const path = require("node:path");

const dist = path.resolve(__dirname, "..", "dist");

// An agent of its own: a build (the image's among them) may have no agents folder. V8 keys a cache to the flags in
// force when it is written, and here nothing sets one before that: not the heap's sizing (its flags come after the
// modules a start loads, but here before the write), and not the drop of start-up's code once listening
// (`--expose-gc`, and it would flush the very code the cache is to hold).
const project = mkdtempSync(path.join(tmpdir(), "picoclaw-code-cache-"));
mkdirSync(path.join(project, "agents", "main"), { recursive: true });
writeFileSync(
  path.join(project, "agents", "main", "AGENT.md"),
  "---\nname: Assistant\ndescription: The code cache's agent\ntools: [todo]\n---\nYou are a helpful assistant.\n",
);
const limits = { young_generation_mib: 0, heap_growing_percent: 0, drop_start_code: false };
writeFileSync(path.join(project, "picoclaw.config.json"), JSON.stringify({ gateway: { port: 0, limits } }));
process.chdir(project);
// A gateway that never answers does not outlive the build (or, for npm start's build, run on unseen).
setTimeout(() => {
  process.stderr.write("the gateway did not answer /health within 60 s\n");
  process.exit(1);
}, 60_000).unref();

const { useCodeCache, writeCodeCache } = require(path.join(dist, "code-cache.js"));
// Recording from the command's own call on (dist/main.js, once V8's optimizing compiler is held off): what a start
// compiles from the cache, under the flags it runs with then.
useCodeCache(dist, { record: true });

let written = false;
const listen = http.Server.prototype.listen;
http.Server.prototype.listen = function listenAndWrite(...args) {
  http.Server.prototype.listen = listen;
  this.once("listening", () => {
    const { port } = this.address();
    const fail = (message) => {
      process.stderr.write(`${message}\n`);
      process.exit(1);
    };
    http
      .get({ host: "127.0.0.1", port, path: "/health" }, (response) => {
        response.resume();
        response.on("end", () => {
          if (response.statusCode !== 200) fail(`/health answered ${response.statusCode}`);
          process.stdout.write(`code cache: ${writeCodeCache()} modules\n`);
          written = true;
          process.exit(0);
        });
      })
      .on("error", (error) => fail(`/health: ${error.message}`));
  });
  return listen.apply(this, args);
};
process.on("exit", (code) => {
  rmSync(project, { recursive: true, force: true });
  if (code === 0 && !written) {
    process.stderr.write("the command ended without listening\n");
    process.exitCode = 1;
  }
});
require(path.join(dist, "main.js"));
