import { describe, expect, it } from "vitest";
import { busyWhen, ownCompilerFlags } from "../../src/jit-budget.js";

/** A clock the test moves. */
function clock() {
  let now = 0;
  return { now: () => now, at: (ms: number) => (now = ms) };
}

describe("when the gateway is busy enough for V8's optimizing compiler", () => {
  it("is busy at the turn that makes `turns` turns begun within `withinMs`, and says so once", () => {
    const time = clock();
    const turnBegins = busyWhen(3, 1_000, time.now);
    time.at(0);
    expect(turnBegins()).toBe(false);
    time.at(400);
    expect(turnBegins()).toBe(false);
    time.at(1_000);
    expect(turnBegins()).toBe(true);
    time.at(1_001);
    expect(turnBegins()).toBe(false);
  });

  it("counts only the last `turns` turns: turns spread wider than `withinMs` never make it busy, a burst later does", () => {
    const time = clock();
    const turnBegins = busyWhen(3, 1_000, time.now);
    for (let i = 0; i < 20; i++) {
      time.at(i * 600);
      expect(turnBegins(), `turn ${i}`).toBe(false);
    }
    time.at(20_000);
    expect(turnBegins()).toBe(false);
    time.at(20_100);
    expect(turnBegins()).toBe(false);
    time.at(20_200);
    expect(turnBegins()).toBe(true);
  });

  it("with 1 turn, is busy at the first", () => {
    const turnBegins = busyWhen(1, 10, () => 5);
    expect(turnBegins()).toBe(true);
    expect(turnBegins()).toBe(false);
  });
});

describe("a node flag of the user's own about V8's compilers", () => {
  it("is found however V8 would read it, and leaves the compilers as it says", () => {
    for (const flag of [
      "--jitless",
      "--no-opt",
      "--noopt",
      "--no_turbofan",
      "--turbofan",
      "-opt",
      "--max-opt=2",
      "--max_opt=0",
      "--maglev",
      "--no-sparkplug",
      "--always-turbofan",
    ])
      expect(ownCompilerFlags(["--enable-source-maps", flag]), flag).toBe(true);
  });

  it("is not any other flag, nor a flag that only starts like one", () => {
    for (const flag of [
      "--max-old-space-size=512",
      "--expose-gc",
      "--inspect",
      "--optimize-for-size",
      "--turbo-inlining",
      "--opt-foo",
      "--interrupt-budget=512",
    ])
      expect(ownCompilerFlags([flag]), flag).toBe(false);
    expect(ownCompilerFlags([])).toBe(false);
  });
});
