import { describe, expect, it, onTestFinished, vi } from "vitest";
import { z } from "zod";
import { type CallObserver, ToolSet, parametersSchema } from "../../src/tools/tool-set.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { type ToolContext, defineTool, toolResult } from "../../src/tools/tool.js";
import { boomTool, echoTool, waitTool, whisperTool } from "../support/tools.js";

/** A call scope whose observer records what the tool set reports, as the runtime's events would carry it. */
function context(signal = new AbortController().signal) {
  const seen: { name: string; payload: Record<string, unknown> }[] = [];
  const scope = { agentId: "main", sessionKey: "agent:main:http:s", turnId: "t1" };
  const observer: CallObserver = {
    started: (tool, callId) => seen.push({ name: "tool.start", payload: { ...scope, tool, callId } }),
    ended: (tool, callId, result, durationMs) =>
      seen.push({ name: "tool.end", payload: { ...scope, tool, callId, isError: result.isError, silent: result.silent, durationMs } }),
    published: (tool, callId, details) => seen.push({ name: "tool.update", payload: { ...scope, tool, callId, details } }),
  };
  return { ctx: { ...scope, signal, observer }, seen };
}

const call = (name: string, args: string, id = "c1") => ({ id, type: "function" as const, function: { name, arguments: args } });

describe("tool set", () => {
  const set = new ToolSet([whisperTool, echoTool, boomTool, waitTool], { now: () => 1000 });

  it("shows the model its tools sorted by name, with JSON Schema from zod", () => {
    expect(set.specs().map((s) => s.name)).toEqual(["boom", "echo", "wait", "whisper"]);
    expect(set.specs()[1]).toEqual({
      name: "echo",
      description: "Repeats the text to the user.",
      parameters: {
        type: "object",
        properties: { text: { type: "string", description: "what to say" } },
        required: ["text"],
        additionalProperties: false,
      },
    });
  });

  it("runs a valid call and reports tool.start / tool.end with the trusted context", async () => {
    const { ctx, seen } = context();
    const result = await set.execute(call("echo", '{"text":"hi"}'), ctx);
    expect(result).toEqual({ forLLM: "echo: hi", forUser: "echo: hi", silent: false, isError: false });
    expect(seen).toEqual([
      { name: "tool.start", payload: { agentId: "main", sessionKey: "agent:main:http:s", turnId: "t1", tool: "echo", callId: "c1" } },
      {
        name: "tool.end",
        payload: { agentId: "main", sessionKey: "agent:main:http:s", turnId: "t1", tool: "echo", callId: "c1", isError: false, silent: false, durationMs: 0 },
      },
    ]);
  });

  it("unparseable argument JSON is an error result the model can read", async () => {
    const result = await set.execute(call("echo", '{"text": "hi"'), context().ctx);
    expect(result.isError).toBe(true);
    expect(result.forLLM).toMatch(/^invalid arguments for tool "echo": not valid JSON \(/);
  });

  it("arguments that break the schema are an error result naming the field", async () => {
    const result = await set.execute(call("echo", '{"text": 5, "x": 1}'), context().ctx);
    expect(result).toEqual({
      forLLM: 'invalid arguments for tool "echo": text: expected string, received integer; unknown key "x"',
      silent: false,
      isError: true,
    });
  });

  it("empty arguments count as {}", async () => {
    const result = await set.execute(call("echo", ""), context().ctx);
    expect(result.forLLM).toBe('invalid arguments for tool "echo": text: required (expected string)');
  });

  it("an unknown or not-effective tool is an error result listing what is available", async () => {
    const result = await set.execute(call("off", "{}"), context().ctx);
    expect(result).toEqual({
      forLLM: 'tool "off" is not available to this agent; available tools: boom, echo, wait, whisper',
      silent: false,
      isError: true,
    });
    const none = await new ToolSet([]).execute(call("echo", "{}"), context().ctx);
    expect(none.forLLM).toBe('tool "echo" is not available to this agent; it has no tools');
  });

  it("a tool that throws becomes an error result, and tool.end still fires", async () => {
    const { ctx, seen } = context();
    const result = await set.execute(call("boom", "{}"), ctx);
    expect(result).toEqual({ forLLM: 'tool "boom" failed: kaboom', silent: false, isError: true });
    expect(seen[1]!.payload.isError).toBe(true);
  });

  it("a tool's context holds only the trusted ids, its signal, its own state and a way to publish its own details", async () => {
    let seenKeys: string[] = [];
    const probe = defineTool({
      name: "probe",
      description: "Looks at its context.",
      parameters: z.object({}),
      execute: (_args, ctx) => {
        seenKeys = Object.keys(ctx).sort();
        ctx.publish({ step: 1 });
        return toolResult.text(`${ctx.agentId} ${ctx.sessionKey}`);
      },
    });
    const { ctx, seen } = context();
    expect((await new ToolSet([probe]).execute(call("probe", "{}"), ctx)).forLLM).toBe("main agent:main:http:s");
    expect(seenKeys).toEqual(["agentId", "callId", "publish", "sessionKey", "signal", "state", "turnId"]);
    expect(seen.map((e) => e.name)).toEqual(["tool.start", "tool.update", "tool.end"]);
    expect(seen[1]!.payload).toEqual({ agentId: "main", sessionKey: "agent:main:http:s", turnId: "t1", tool: "probe", callId: "c1", details: { step: 1 } });
  });

  it("details a tool publishes after its call is over are dropped", async () => {
    let late: ((details: unknown) => void) | undefined;
    const lingering = defineTool({
      name: "lingering",
      description: "Keeps its publish.",
      parameters: z.object({}),
      execute: (_args, ctx) => {
        late = ctx.publish;
        return toolResult.text("done");
      },
    });
    const { ctx, seen } = context();
    await new ToolSet([lingering]).execute(call("lingering", "{}"), ctx);
    late!({ after: true });
    expect(seen.map((e) => e.name)).toEqual(["tool.start", "tool.end"]);
  });

  it("an abort of the turn escapes as an abort, not as a result", async () => {
    const controller = new AbortController();
    const running = set.execute(call("wait", '{"ms": 60000}'), context(controller.signal).ctx);
    controller.abort(new Error("client went away"));
    await expect(running).rejects.toThrow("client went away");
  });

  it("an abort ends a call at once even when the tool ignores its signal", async () => {
    const deaf = defineTool({ name: "deaf", description: "", parameters: z.object({}), timeoutMs: 0, execute: () => new Promise<never>(() => {}) });
    const controller = new AbortController();
    const running = new ToolSet([deaf]).execute(call("deaf", "{}"), context(controller.signal).ctx);
    controller.abort(new Error("stop now"));
    await expect(running).rejects.toThrow("stop now");
  });

  it("an abort while an async precheck is awaited ends the call, and the tool never runs", async () => {
    let ran = false;
    let pass!: () => void;
    const checked = defineTool({
      name: "checked",
      description: "",
      parameters: z.object({}),
      timeoutMs: 0,
      precheck: () => new Promise<undefined>((resolve) => (pass = () => resolve(undefined))),
      execute: () => {
        ran = true;
        return new Promise<never>(() => {});
      },
    });
    const controller = new AbortController();
    const running = new ToolSet([checked]).execute(call("checked", "{}"), context(controller.signal).ctx);
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort(new Error("stop now"));
    pass();
    await expect(running).rejects.toThrow("stop now");
    expect(ran).toBe(false);
  });

  it("a tool past its time limit gets an error result, and its signal aborts", async () => {
    vi.useFakeTimers();
    onTestFinished(() => void vi.useRealTimers());
    let sawAbort = false;
    const slow = defineTool({
      name: "slow",
      description: "",
      parameters: z.object({}),
      timeoutMs: 20,
      execute: (_args, ctx) =>
        new Promise<never>(() => {
          ctx.signal.addEventListener("abort", () => (sawAbort = true));
        }),
    });
    let result: unknown;
    void new ToolSet([slow]).execute(call("slow", "{}"), context().ctx).then((r) => (result = r));
    await vi.advanceTimersByTimeAsync(19);
    expect(result).toBeUndefined();
    expect(sawAbort).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(result).toEqual({
      forLLM: 'tool "slow" did not finish within 20 ms (tools.slow.timeout_ms); try again or do without it',
      silent: false,
      isError: true,
    });
    expect(sawAbort).toBe(true);
  });

  it("a tool that returns nothing, or what JSON cannot carry, gets an error result that says what to return", async () => {
    const run = (value: unknown) =>
      new ToolSet([defineTool({ name: "odd", description: "", parameters: z.object({}), execute: () => value as never })]).execute(
        call("odd", "{}"),
        context().ctx,
      );
    expect(await run(undefined)).toEqual({
      forLLM: 'tool "odd" returned nothing; return a string, a JSON value or a toolResult',
      silent: false,
      isError: true,
    });
    expect((await run(10n)).forLLM).toMatch(/^tool "odd" returned a value that is not JSON \(/);
    expect((await run(() => 1)).forLLM).toBe('tool "odd" returned a value that is not JSON (function)');
  });

  it("a tool may return a plain string (the model's text) or any JSON value (sent as JSON)", async () => {
    const run = (value: unknown) =>
      new ToolSet([defineTool({ name: "plain", description: "", parameters: z.object({}), execute: () => value as never })]).execute(
        call("plain", "{}"),
        context().ctx,
      );
    expect(await run("it is 12:00")).toEqual({ forLLM: "it is 12:00", silent: false, isError: false });
    expect(await run({ temperature: 21, unit: "C" })).toEqual({ forLLM: '{"temperature":21,"unit":"C"}', silent: false, isError: false });
    expect(await run([1, 2])).toEqual({ forLLM: "[1,2]", silent: false, isError: false });
    expect(await run(null)).toEqual({ forLLM: "null", silent: false, isError: false });
  });

  it("a tool's parameters may be a plain JSON Schema object: the model is shown it, and bad arguments never reach execute", async () => {
    let ran = 0;
    const weather = defineTool({
      name: "weather",
      description: "Weather for a city.",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
      execute: (args) => {
        ran++;
        return `sunny in ${String(args.city)}`;
      },
    });
    const set = new ToolSet([weather]);
    expect(set.specs()[0]!.parameters).toEqual({ type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false });
    expect((await set.execute(call("weather", '{"city":"Oslo"}'), context().ctx)).forLLM).toBe("sunny in Oslo");
    expect(await set.execute(call("weather", '{"town":"Oslo"}'), context().ctx)).toEqual({
      forLLM: 'invalid arguments for tool "weather": city: required; unknown key "town"',
      silent: false,
      isError: true,
    });
    expect(ran).toBe(1);
    expect(() => defineTool({ name: "bad", description: "", parameters: { type: "string" } as never, execute: () => "" })).toThrow(
      'tool "bad": parameters does not have type "object" at the top',
    );
  });

  it("a tool that validates its own arguments receives them raw", async () => {
    const raw = defineTool({
      name: "raw",
      description: "",
      parameters: z.object({ a: z.string() }),
      validatesOwnArguments: true,
      execute: (args) => toolResult.text(JSON.stringify(args)),
    });
    expect(parametersSchema(raw)).toMatchObject({ properties: { a: { type: "string" } } });
    const result = await new ToolSet([raw]).execute(call("raw", '{"a": 1, "b": [null]}'), context().ctx);
    expect(result.forLLM).toBe('{"a":1,"b":[null]}');
  });
});

describe("per-session tool state", () => {
  it("is typed by annotating ctx, kept per agent and session, and always present", async () => {
    const counter = defineTool({
      name: "counter",
      description: "",
      parameters: z.object({}),
      execute: (_args, ctx: ToolContext<number>) => {
        const next = (ctx.state.get() ?? 0) + 1;
        ctx.state.set(next);
        return toolResult.text(String(next));
      },
    });
    const set = new ToolSet([counter]);
    const run = (sessionKey: string) => set.execute(call("counter", "{}"), { ...context().ctx, sessionKey });
    expect((await run("a")).forLLM).toBe("1");
    expect((await run("a")).forLLM).toBe("2");
    expect((await run("b")).forLLM).toBe("1");
  });
});

describe("result helpers", () => {
  it("say who sees what", () => {
    expect(toolResult.text("for the model")).toEqual({ forLLM: "for the model", silent: false, isError: false });
    expect(toolResult.text("for the model", "for you")).toEqual({ forLLM: "for the model", forUser: "for you", silent: false, isError: false });
    expect(toolResult.user("both")).toEqual({ forLLM: "both", forUser: "both", silent: false, isError: false });
    expect(toolResult.silent("quiet")).toEqual({ forLLM: "quiet", silent: true, isError: false });
    expect(toolResult.error("bad")).toEqual({ forLLM: "bad", silent: false, isError: true });
  });
});

describe("tool registry", () => {
  it("refuses two tools with one name and names that models cannot call", () => {
    expect(() => new ToolRegistry([echoTool, echoTool])).toThrow('two tools are named "echo"');
    expect(() => defineTool({ name: "bad name", description: "", parameters: z.object({}), execute: () => toolResult.text("") })).toThrow(/must match/);
  });
});
