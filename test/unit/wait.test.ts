import { describe, expect, it, onTestFinished, vi } from "vitest";
import { ManualTimers } from "../support/timers.js";
import { WAIT_MS, WaitTimeout, eventually, waitFor, within } from "../support/wait.js";

/**
 * The tests' waits (test/support/wait.ts). Their deadlines run on
 * ManualTimers here, run out when the test says so: nothing waits for a
 * real clock.
 */

const never = new Promise<never>(() => {});

describe("waitFor", () => {
  it("a condition that never holds fails once the deadline runs out, naming what it waited for and what there was instead", async () => {
    const timers = new ManualTimers();
    const waiting = waitFor("the model's first request", () => false, { timer: timers.timer, instead: () => "it got none" });
    expect(timers.pending().map((t) => t.ms)).toEqual([WAIT_MS]);
    timers.fireAll();
    await expect(waiting).rejects.toThrow(new WaitTimeout("waited 15 s for the model's first request; it got none"));
  });

  it("resolves once the condition holds, checking again until then, and leaves no deadline running", async () => {
    const timers = new ManualTimers();
    let checks = 0;
    await waitFor("the third check", () => ++checks === 3, { timer: timers.timer });
    expect(checks).toBe(3);
    expect(timers.pending()).toEqual([]);
  });

  it("a condition that throws fails the wait with its error", async () => {
    const timers = new ManualTimers();
    const broken = () => {
      throw new Error("no such state");
    };
    await expect(waitFor("a state", broken, { timer: timers.timer })).rejects.toThrow("no such state");
    expect(timers.pending()).toEqual([]);
  });
});

describe("within", () => {
  it("a promise that never settles fails once the deadline runs out, naming what it waited for", async () => {
    const timers = new ManualTimers();
    const waiting = within("the gateway to exit", never, { timer: timers.timer, ms: 5_000 });
    expect(timers.pending().map((t) => t.ms)).toEqual([5_000]);
    timers.fireAll();
    await expect(waiting).rejects.toThrow(new WaitTimeout("waited 5 s for the gateway to exit"));
  });

  it("passes a value or a rejection on as it is, and leaves no deadline running", async () => {
    const timers = new ManualTimers();
    expect(await within("a value", Promise.resolve(42), { timer: timers.timer })).toBe(42);
    await expect(within("a failure", Promise.reject(new Error("refused")), { timer: timers.timer })).rejects.toThrow("refused");
    expect(timers.pending()).toEqual([]);
  });

  it("vitest's fake timers do not run its deadline out: it is on the real clock", async () => {
    vi.useFakeTimers();
    onTestFinished(() => void vi.useRealTimers());
    let arrive!: (value: string) => void;
    const waiting = within("the answer", new Promise<string>((resolve) => (arrive = resolve)));
    await vi.advanceTimersByTimeAsync(10 * WAIT_MS);
    arrive("here");
    expect(await waiting).toBe("here");
  });
});

describe("eventually", () => {
  it("retries the check until it passes, and returns what it returned", async () => {
    const timers = new ManualTimers();
    let tries = 0;
    const value = await eventually(
      () => {
        tries++;
        expect(tries).toBe(3);
        return "passed";
      },
      { timer: timers.timer },
    );
    expect({ value, tries }).toEqual({ value: "passed", tries: 3 });
    expect(timers.pending()).toEqual([]);
  });

  it("a check that never passes fails with its last assertion error, saying how long it tried", async () => {
    const timers = new ManualTimers();
    let tries = 0;
    const waiting = eventually(() => expect(++tries).toBe(-1), { timer: timers.timer });
    await waitFor("a few tries", () => tries >= 2);
    timers.fireAll();
    await expect(waiting).rejects.toThrow(/^still failing after 15 s: expected \d+ to be -1/);
  });

  it("an async check that hangs fails at the deadline, naming that no check passed", async () => {
    const timers = new ManualTimers();
    const waiting = eventually(() => never, { timer: timers.timer });
    timers.fireAll();
    await expect(waiting).rejects.toThrow(new WaitTimeout("waited 15 s for a check to pass"));
  });
});
