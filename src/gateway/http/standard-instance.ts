/**
 * `instanceof` for the gateway's own Headers, Request and Response: any object the platform tags as one counts (Node's
 * own among them, such as a Response a plugin's route got from `fetch`), so hono's checks take either. A subclass of
 * ours (`asked` is not `ours`) keeps the plain prototype check.
 */
export function isStandardInstance(asked: object, ours: object, tag: string, value: unknown): boolean {
  if (asked !== ours) return Function.prototype[Symbol.hasInstance].call(asked, value);
  return typeof value === "object" && value !== null && Object.prototype.toString.call(value) === `[object ${tag}]`;
}
