"use strict";
require("../dist/main.js");
