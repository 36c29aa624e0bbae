import { describe, expect, it } from "vitest";
import { redactingLogger } from "../../src/log.js";
import { REDACTED, noRedaction, redactor } from "../../src/tools/redact.js";
import { recordingLogger } from "../support/project.js";

/** The one scrubber of configured secrets (tool results, MCP stderr, the log). */
describe("the secret scrubber", () => {
  it("replaces every secret, as written and as it looks inside JSON strings and URLs", () => {
    const redact = redactor(["s3cr3t-value", 'quote"d\\pass', "p@ss w/rd"]);
    expect(redact("key s3cr3t-value, again s3cr3t-value.")).toBe(`key ${REDACTED}, again ${REDACTED}.`);
    expect(redact(JSON.stringify({ password: 'quote"d\\pass' }))).toBe(`{"password":"${REDACTED}"}`);
    expect(redact(`https://h/?pw=${encodeURIComponent("p@ss w/rd")}`)).toBe(`https://h/?pw=${REDACTED}`);
  });

  it("replaces the longest match first, and leaves values too short to be told from words", () => {
    const redact = redactor(["abcd", "abcdefgh", "ab"]);
    expect(redact("abcdefgh abcd ab")).toBe(`${REDACTED} ${REDACTED} ab`);
  });

  it("without secrets, changes nothing", () => {
    expect(redactor([])).toBe(noRedaction);
    expect(redactor(["", "x"])("x marks")).toBe("x marks");
  });

  it("a redacting logger scrubs every message and every string of its data", () => {
    const lines = recordingLogger();
    const seen: unknown[] = [];
    const logger = redactingLogger(
      {
        ...lines,
        warn: (message, data) => {
          lines.warn(message);
          seen.push(data);
        },
      },
      redactor(["tok-123456"]),
    );
    logger.info("used tok-123456");
    logger.warn("failed", { detail: ["x tok-123456"], n: 1, nested: { why: "tok-123456" } });
    expect(lines.lines).toEqual([
      { level: "info", message: `used ${REDACTED}` },
      { level: "warn", message: "failed" },
    ]);
    expect(seen).toEqual([{ detail: [`x ${REDACTED}`], n: 1, nested: { why: REDACTED } }]);
  });
});
