// What hono's modules import in the place of the globals (scripts/fetch-classes.mjs).
export { Headers } from "./headers.js";
export { Request } from "./request.js";
export { Response } from "./response.js";
