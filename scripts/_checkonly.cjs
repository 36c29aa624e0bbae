"use strict";
const path = require("node:path");
const root = path.resolve(__dirname, "..");
const { buildIsCurrent } = require("./_bi.cjs");
if (!buildIsCurrent(root)) throw new Error("not current");
require("../dist/main.js");
