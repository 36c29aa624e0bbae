import { benchActingTools } from "./acting-tools.js";
import { benchCeiling } from "./ceiling.js";
import { benchDurable } from "./durable.js";
import { benchFleet } from "./fleet.js";
import { benchFloor } from "./floor.js";
import { benchMemory } from "./memory.js";
import { benchPersist } from "./persist.js";
import { benchRestart } from "./restart.js";
import { benchSubagents } from "./subagents.js";
import { benchTodo } from "./todo.js";
import { benchTraces } from "./traces.js";
import { benchTtft } from "./ttft.js";
import { benchTurn } from "./turn.js";

/** `npm run bench`: every benchmark, one after another, each printing ratios against its own baseline. */
console.log(`node ${process.version}, ${process.platform}/${process.arch}`);
await benchFloor();
await benchDurable();
await benchTurn();
await benchTraces();
await benchActingTools();
await benchTtft();
await benchTodo();
await benchSubagents();
await benchMemory();
await benchCeiling();
await benchPersist();
await benchRestart();
await benchFleet();
