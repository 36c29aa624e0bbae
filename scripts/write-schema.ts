import { writeFileSync } from "node:fs";
import path from "node:path";
import { configJsonSchemaText } from "../src/config/json-schema.js";

/** Regenerates config/picoclaw.schema.json from the zod schema (`npm run schema`). */
const target = path.resolve(import.meta.dirname, "..", "config", "picoclaw.schema.json");
writeFileSync(target, configJsonSchemaText());
console.log(`wrote ${path.relative(process.cwd(), target)}`);
