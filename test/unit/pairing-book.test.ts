/**
 * The runtime's pairing book on the feature state, on a clock the test
 * moves: codes (random from an unambiguous alphabet, injectable), the same
 * code on a repeat with at most one reply per reminder period, expiry, the
 * cap per channel, approve letting the user in, deny dropping the code, and
 * all of it durable: a new book on the same state knows it.
 */
import { describe, expect, it } from "vitest";
import { MemoryFeatureState, stateView } from "../../src/session/feature-state.js";
import { PAIRINGS_NAMESPACE, PAIRING_ALPHABET, PAIRING_CODE, PAIRING_REMIND_MS, PairingBook, randomPairingCode } from "../../src/runtime/pairing/book.js";
import { ManualClock } from "../support/timers.js";
import { recordingLogger } from "../support/project.js";

const RULES = { ttlMs: 60 * 60_000, maxPending: 3 };
const HOUR = 60 * 60_000;

function setUp(codes?: string[]) {
  const store = new MemoryFeatureState();
  const clock = new ManualClock(1_700_000_000_000);
  const state = stateView(store, PAIRINGS_NAMESPACE);
  const queue = codes ? [...codes] : undefined;
  const make = () => new PairingBook({ state, clock, logger: recordingLogger(), ...(queue ? { codes: () => queue.shift() ?? "ZZZZZZZZ" } : {}) });
  return { store, clock, state, book: make(), make };
}

describe("the pairing book", () => {
  it("makes random 8-character codes of 32 letters and digits without 0, O, 1 or I", () => {
    expect(PAIRING_ALPHABET).toHaveLength(32);
    expect(PAIRING_ALPHABET).not.toMatch(/[0O1I]/);
    const codes = new Set(Array.from({ length: 200 }, randomPairingCode));
    for (const code of codes) expect(code).toMatch(PAIRING_CODE);
    expect(codes.size).toBeGreaterThan(190);
  });

  it("gives an unknown user a code, and the same code when they write again, replying at most once per reminder period", async () => {
    const { book, clock } = setUp(["ABCD2345", "EFGH6789"]);
    const first = await book.request("telegram", { id: "1001", name: "@bob" }, RULES);
    expect(first).toEqual({ kind: "pending", code: "ABCD2345", expiresAt: clock.now() + HOUR, created: true, reply: true });
    clock.advance(60_000);
    expect(await book.request("telegram", { id: "1001" }, RULES)).toMatchObject({ kind: "pending", code: "ABCD2345", created: false, reply: false });
    clock.advance(PAIRING_REMIND_MS);
    expect(await book.request("telegram", { id: "1001" }, RULES)).toMatchObject({ kind: "pending", code: "ABCD2345", created: false, reply: true });
    expect(await book.request("telegram", { id: "1001" }, RULES)).toMatchObject({ code: "ABCD2345", reply: false });
    expect(await book.pending()).toEqual([
      { code: "ABCD2345", channel: "telegram", userId: "1001", userName: "@bob", requestedAt: 1_700_000_000_000, expiresAt: 1_700_000_000_000 + HOUR },
    ]);
  });

  it("drops a code once it expires: it cannot be approved, and the user then gets a new one", async () => {
    const { book, clock } = setUp(["ABCD2345", "EFGH6789"]);
    await book.request("telegram", { id: "1001" }, RULES);
    clock.advance(HOUR);
    expect(await book.pending()).toEqual([]);
    expect(await book.approve("ABCD2345")).toBeUndefined();
    expect(await book.request("telegram", { id: "1001" }, RULES)).toMatchObject({ kind: "pending", code: "EFGH6789", created: true, reply: true });
  });

  it("holds at most maxPending codes per channel; other channels have their own", async () => {
    const { book } = setUp(["AAAA2222", "BBBB3333", "CCCC4444", "DDDD5555"]);
    for (const id of ["1", "2", "3"]) expect((await book.request("telegram", { id }, RULES)).kind).toBe("pending");
    expect(await book.request("telegram", { id: "4" }, RULES)).toEqual({ kind: "full" });
    expect(await book.request("discord", { id: "4" }, RULES)).toMatchObject({ kind: "pending", code: "DDDD5555" });
    // Denying one makes room.
    expect(await book.deny("aaaa2222")).toMatchObject({ code: "AAAA2222", userId: "1" });
    expect(await book.request("telegram", { id: "4" }, RULES)).toMatchObject({ kind: "pending", created: true });
  });

  it("lets the approved user in (any case of the code), tells the channel's listener, and forgets the code", async () => {
    const { book, clock } = setUp(["ABCD2345"]);
    const told: unknown[] = [];
    book.onApproved("telegram", (user) => told.push(user));
    book.onApproved("discord", () => told.push("wrong channel"));
    await book.request("telegram", { id: "1001", name: "@bob" }, RULES);
    clock.advance(1000);
    const user = await book.approve(" abcd2345 ");
    expect(user).toEqual({ channel: "telegram", userId: "1001", userName: "@bob", approvedAt: 1_700_000_001_000 });
    expect(told).toEqual([user]);
    expect(await book.isApproved("telegram", "1001")).toBe(true);
    expect(await book.isApproved("discord", "1001")).toBe(false);
    expect(await book.request("telegram", { id: "1001" }, RULES)).toEqual({ kind: "approved" });
    expect(await book.pending()).toEqual([]);
    expect(await book.approve("ABCD2345")).toBeUndefined();
  });

  it("deny drops the code and lets nobody in; unknown and malformed codes change nothing", async () => {
    const { book } = setUp(["ABCD2345", "EFGH6789"]);
    await book.request("telegram", { id: "1001" }, RULES);
    expect(await book.deny("NOPE2345")).toBeUndefined();
    expect(await book.approve("../../x")).toBeUndefined();
    expect(await book.deny("ABCD2345")).toMatchObject({ code: "ABCD2345", channel: "telegram", userId: "1001" });
    expect(await book.isApproved("telegram", "1001")).toBe(false);
    expect(await book.pending()).toEqual([]);
    // Writing again after a deny is a new request, with a new code.
    expect(await book.request("telegram", { id: "1001" }, RULES)).toMatchObject({ code: "EFGH6789", created: true });
  });

  it("keeps codes and paired users durably: a new book on the same state knows them, and revoke lets a user out", async () => {
    const { book, make } = setUp(["ABCD2345", "EFGH6789"]);
    await book.request("telegram", { id: "1001" }, RULES);
    await book.request("telegram", { id: "1002" }, RULES);
    await book.approve("ABCD2345");
    const again = make();
    expect(await again.isApproved("telegram", "1001")).toBe(true);
    expect(await again.paired()).toEqual([expect.objectContaining({ channel: "telegram", userId: "1001" })]);
    expect((await again.pending()).map((p) => p.code)).toEqual(["EFGH6789"]);
    expect(await again.request("telegram", { id: "1002" }, RULES)).toMatchObject({ code: "EFGH6789", created: false });
    expect(await again.revoke("telegram", "1001")).toBe(true);
    expect(await again.revoke("telegram", "1001")).toBe(false);
    expect(await again.isApproved("telegram", "1001")).toBe(false);
  });

  it("stores ids, a name and times, never anything else: a name is cut and stripped of control characters", async () => {
    const { book, state } = setUp(["ABCD2345"]);
    await book.request("telegram", { id: "1001", name: `@bob\u0000\u202e${"x".repeat(100)}` }, RULES);
    const [entry] = await state.list();
    expect(entry!.key).toBe("pending:ABCD2345");
    expect(Object.keys(entry!.value as object).sort()).toEqual(["channel", "expires_at", "requested_at", "user_id", "user_name"]);
    expect((entry!.value as { user_name: string }).user_name).toBe(`@bob${"x".repeat(60)}`);
  });

  it("two requests of one user at once make one code; a taken code is not given twice", async () => {
    const { book } = setUp(["ABCD2345", "ABCD2345", "EFGH6789"]);
    const [a, b] = await Promise.all([book.request("telegram", { id: "1" }, RULES), book.request("telegram", { id: "1" }, RULES)]);
    expect(a).toMatchObject({ code: "ABCD2345", created: true });
    expect(b).toMatchObject({ code: "ABCD2345", created: false });
    expect(await book.request("telegram", { id: "2" }, RULES)).toMatchObject({ code: "EFGH6789" });
  });
});
