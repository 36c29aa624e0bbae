import { writeFileSync } from "node:fs";
import path from "node:path";
import { configJsonSchemaText } from "../src/config/json-schema.js";
import { builtinHouse } from "../src/house.js";

/** Regenerates config/picoclaw.schema.json from the zod schema of the built-in features and adapters (`npm run schema`). */
const target = path.resolve(import.meta.dirname, "..", "config", "picoclaw.schema.json");
writeFileSync(target, configJsonSchemaText(builtinHouse().layout));
console.log(`wrote ${path.relative(process.cwd(), target)}`);
