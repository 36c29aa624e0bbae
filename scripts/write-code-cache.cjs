// A build step (scripts/build.mjs runs it in a folder of its own): starts
// the gateway from dist/ with the code cache recording (src/code-cache.ts),
// asks it for /health once it listens, writes dist/code-cache/ with what
// that start compiled, and exits.
"use strict";
const http = require("node:http");
const path = require("node:path");

const dist = path.resolve(__dirname, "..", "dist");
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
  if (code === 0 && !written) {
    process.stderr.write("the command ended without listening\n");
    process.exitCode = 1;
  }
});
require(path.join(dist, "main.js"));
