"use strict";
var __create = Object.create;
var __defProp = Object.defineProperty;
var __getOwnPropDesc = Object.getOwnPropertyDescriptor;
var __getOwnPropNames = Object.getOwnPropertyNames;
var __getProtoOf = Object.getPrototypeOf;
var __hasOwnProp = Object.prototype.hasOwnProperty;
var __export = (target, all) => {
  for (var name in all)
    __defProp(target, name, { get: all[name], enumerable: true });
};
var __copyProps = (to, from, except, desc) => {
  if (from && typeof from === "object" || typeof from === "function") {
    for (let key of __getOwnPropNames(from))
      if (!__hasOwnProp.call(to, key) && key !== except)
        __defProp(to, key, { get: () => from[key], enumerable: !(desc = __getOwnPropDesc(from, key)) || desc.enumerable });
  }
  return to;
};
var __toESM = (mod, isNodeMode, target) => (target = mod != null ? __create(__getProtoOf(mod)) : {}, __copyProps(
  // If the importer is in node compatibility mode or this is not an ESM
  // file that has been converted to a CommonJS file using a Babel-
  // compatible transform (i.e. "__esModule" has not been set), then set
  // "default" to the CommonJS "module.exports" for node compatibility.
  isNodeMode || !mod || !mod.__esModule ? __defProp(target, "default", { value: mod, enumerable: true }) : target,
  mod
));
var __toCommonJS = (mod) => __copyProps(__defProp({}, "__esModule", { value: true }), mod);
var build_inputs_exports = {};
__export(build_inputs_exports, {
  STAMP: () => STAMP,
  buildInputs: () => buildInputs,
  buildIsCurrent: () => buildIsCurrent,
  digestOf: () => digestOf,
  stampText: () => stampText
});
module.exports = __toCommonJS(build_inputs_exports);
var import_node_crypto = require("node:crypto");
var import_node_fs = require("node:fs");
var import_node_path = __toESM(require("node:path"), 1);
const STAMP = import_node_path.default.join("dist", ".build-inputs");
const SETTINGS = [
  "tsconfig.json",
  "package-lock.json",
  import_node_path.default.join("scripts", "build.mjs"),
  import_node_path.default.join("scripts", "build-web.mjs"),
  import_node_path.default.join("scripts", "fetch-classes.mjs"),
  import_node_path.default.join("scripts", "write-code-cache.cjs")
];
function sourcesUnder(dir, pattern, found, folders) {
  if (!(0, import_node_fs.existsSync)(dir)) return found;
  folders?.push(dir);
  for (const entry of (0, import_node_fs.readdirSync)(dir, { withFileTypes: true })) {
    const full = import_node_path.default.join(dir, entry.name);
    if (entry.isDirectory()) sourcesUnder(full, pattern, found, folders);
    else if (pattern.test(entry.name)) found.push(full);
  }
  return found;
}
function buildInputs(root, folders) {
  const files = sourcesUnder(import_node_path.default.join(root, "src"), /\.ts$/, [], folders);
  sourcesUnder(import_node_path.default.join(root, "web"), /\.(ts|html|css|svg)$/, files, folders);
  for (const file of SETTINGS) if ((0, import_node_fs.existsSync)(import_node_path.default.join(root, file))) files.push(import_node_path.default.join(root, file));
  return files.sort();
}
function stampText(root, digest, files, folders) {
  const absent = SETTINGS.filter((file) => !(0, import_node_fs.existsSync)(import_node_path.default.join(root, file)));
  const lines = [
    digest,
    ...files.map((file) => `f ${import_node_path.default.relative(root, file)}`),
    ...folders.map((dir) => `d ${import_node_path.default.relative(root, dir)}`),
    ...absent.map((file) => `n ${file}`)
  ];
  return `${lines.join("\n")}
`;
}
function unchangedSince(root, lines, madeMs) {
  if (lines.length < 2) return false;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    if (line === "") continue;
    const found = (0, import_node_fs.statSync)(import_node_path.default.join(root, line.slice(2)), { throwIfNoEntry: false });
    if (line.startsWith("n ")) {
      if (found) return false;
    } else if (!found || found.mtimeMs > madeMs || found.isDirectory() !== line.startsWith("d ")) return false;
  }
  return true;
}
function digestOf(root, files) {
  const hash = (0, import_node_crypto.createHash)("sha256");
  for (const file of files)
    hash.update(`${import_node_path.default.relative(root, file)}\0`).update((0, import_node_fs.readFileSync)(file)).update("\0");
  return hash.digest("hex");
}
function buildIsCurrent(root, withTypes = false) {
  const stamp = import_node_path.default.join(root, STAMP);
  const made = (0, import_node_fs.statSync)(stamp, { throwIfNoEntry: false });
  if (!made || !(0, import_node_fs.existsSync)(import_node_path.default.join(root, "dist", "main.js"))) return false;
  if (withTypes && !(0, import_node_fs.existsSync)(import_node_path.default.join(root, "dist", "main.d.ts"))) return false;
  if ((0, import_node_fs.existsSync)(import_node_path.default.join(root, "web")) && !(0, import_node_fs.existsSync)(import_node_path.default.join(root, "dist", "web", "index.html"))) return false;
  const lines = (0, import_node_fs.readFileSync)(stamp, "utf8").split("\n");
  if (unchangedSince(root, lines, made.mtimeMs)) return true;
  const readAt = new Date(Date.now() - 1);
  const folders = [];
  const inputs = buildInputs(root, folders);
  const digest = digestOf(root, inputs);
  if (lines[0].trim() !== digest) return false;
  (0, import_node_fs.writeFileSync)(stamp, stampText(root, digest, inputs, folders));
  (0, import_node_fs.utimesSync)(stamp, readAt, readAt);
  return true;
}
// Annotate the CommonJS export names for ESM import in node:
0 && (module.exports = {
  STAMP,
  buildInputs,
  buildIsCurrent,
  digestOf,
  stampText
});
