await import("../dist/main.js");
