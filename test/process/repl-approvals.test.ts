/**
 * `picoclaw agent` without -m asks on the terminal: a call under approval
 * "ask" gets y/n/a, an ask_user question the next line. Here, because the
 * calls are real exec commands (a child process each).
 */
import { describe, expect, it } from "vitest";
import { cliChat } from "../support/cli.js";

const chat = cliChat;

describe("picoclaw agent without -m: asking on the terminal", () => {
  const exec = (command: string) => `CALL exec ${JSON.stringify({ action: "run", command })}`;

  it("asks y/n/a for a call under approval ask: y runs it, n does not", async () => {
    const { code, out, err, prompts } = await chat(`${exec("echo yes-ran")}\ny\n${exec("echo no-ran")}\nn\n`);
    expect(code).toBe(0);
    expect(err.filter((line) => line.startsWith("[approval]"))).toEqual([
      '[approval] exec wants to run with {"action":"run","command":"echo yes-ran"}',
      '[approval] exec wants to run with {"action":"run","command":"echo no-ran"}',
    ]);
    expect(prompts.filter((p) => p.startsWith("Allow?"))).toHaveLength(2);
    expect(out[0]).toMatch(/yes-ran/);
    expect(out[0]).not.toMatch(/declined/);
    expect(out[1]).toMatch(/The user declined to run exec \(denied by repl\)/);
  });

  it("a: allows the tool for the rest of the session; an answer it does not know is asked again", async () => {
    const { out, err } = await chat(`${exec("echo one")}\nmaybe\na\n${exec("echo two")}\n`);
    expect(err.filter((line) => line.startsWith("[approval]"))).toHaveLength(1);
    expect(err).toContain("Answer y, n or a.");
    expect(out[0]).toMatch(/one/);
    expect(out[1]).toMatch(/two/);
  });

  it("an ask_user question takes the next line as its answer", async () => {
    const { out, err } = await chat(`CALL ask_user ${JSON.stringify({ question: "Tea or coffee?", options: ["tea", "coffee"] })}\ncoffee\n`);
    expect(err).toContain("[question] Tea or coffee? (tea / coffee)");
    expect(out).toHaveLength(1);
    expect(out[0]).toMatch(/The user answered: coffee/);
  });

  it("the input ending while a call waits stops the turn: nothing runs", async () => {
    const { code, out } = await chat(`${exec("echo never")}\n`);
    expect(code).toBe(0);
    expect(out.join("\n")).not.toMatch(/never/);
  });
});
