import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "..", "..");
const readme = readFileSync(path.join(root, "README.md"), "utf8");

describe("README", () => {
  it("shows the example plugin byte for byte as examples/tools/clock.js holds it", () => {
    const marker = "(`examples/tools/clock.js`):\n\n```js\n";
    const start = readme.indexOf(marker);
    expect(start, "README names examples/tools/clock.js before its code block").toBeGreaterThan(0);
    const code = readme.slice(start + marker.length, readme.indexOf("```\n", start + marker.length));
    expect(code).toBe(readFileSync(path.join(root, "examples", "tools", "clock.js"), "utf8"));
  });

  it("shows each client example byte for byte as examples/clients/ holds it", () => {
    for (const file of ["openai-sdk.mjs", "ai-sdk.mjs", "langchain.mjs"]) {
      const marker = `(\`examples/clients/${file}\`):\n\n\`\`\`js\n`;
      const start = readme.indexOf(marker);
      expect(start, `README names examples/clients/${file} before its code block`).toBeGreaterThan(0);
      const code = readme.slice(start + marker.length, readme.indexOf("```\n", start + marker.length));
      expect(code, file).toBe(readFileSync(path.join(root, "examples", "clients", file), "utf8"));
    }
  });
});
