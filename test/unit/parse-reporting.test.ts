/**
 * parseReporting (src/validation.ts): a value that fits is parsed as
 * zod's plain safeParse parses it; one that does not gets the same issues
 * as a reporting parse, each with the input it was given (what the errors
 * of HTTP bodies and model answers quote).
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { describeIssues, parseReporting } from "../../src/validation.js";

const schema = z.looseObject({ message: z.string(), session: z.string().optional(), parts: z.array(z.object({ n: z.number() })).optional() });

describe("parseReporting", () => {
  it("a value that fits comes back as zod parses it, unknown keys kept by a loose object", () => {
    const parsed = parseReporting(schema, { message: "hi", extra: 1, parts: [{ n: 2 }] });
    expect(parsed).toEqual({ success: true, data: { message: "hi", extra: 1, parts: [{ n: 2 }] } });
  });

  it("a value that does not fit fails with every issue, each with its input, as a reporting parse says", () => {
    const bad = { message: 7, parts: [{ n: "x" }] };
    const parsed = parseReporting(schema, bad);
    const reporting = schema.safeParse(bad, { reportInput: true });
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues).toEqual(reporting.error!.issues);
    expect(parsed.error!.issues.map((issue) => issue.input)).toEqual([7, "x"]);
    expect(describeIssues(parsed.error!)).toEqual(describeIssues(reporting.error!));
  });
});
