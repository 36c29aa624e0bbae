import { measureStarts } from "./floor.js";
console.log(await measureStarts("/tmp/stcfg"));
