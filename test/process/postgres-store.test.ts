/**
 * Store postgres on a real, throwaway cluster (test/support/postgres.ts):
 * the session store contract every durable store keeps (the suite the JSONL
 * store runs too), then what only a shared database does: several
 * processes' stores on one database, the order of turns across them, the
 * schema's migrations, and the database going away and coming back.
 */
import pg from "pg";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log.js";
import { PgDatabase } from "../../src/session/postgres/database.js";
import { MIGRATIONS } from "../../src/session/postgres/migrations.js";
import { type PostgresOptions, postgresOptions } from "../../src/session/postgres/options.js";
import { PgFeatureState } from "../../src/session/postgres/pg-state.js";
import { PgHistoryStore } from "../../src/session/postgres/pg-history.js";
import { PgTurnOrder, SESSION_LOCK_CLASS } from "../../src/session/postgres/turn-lock.js";
import { realTimer } from "../../src/signals.js";
import { type Cluster, postgresTests, useCluster } from "../support/postgres.js";
import { type StoreOpener, durableStoreContract, gatewayStoreContract } from "../support/store-contract.js";
import { eventually, within } from "../support/wait.js";

const tests = postgresTests();
let cluster: Cluster;

const optionsFor = (url: string, extra: Partial<PostgresOptions> = {}): PostgresOptions => ({ ...postgresOptions.parse({ url })!, ...extra });

function pgAt(url: string): StoreOpener {
  return (opts = {}) => {
    const db = new PgDatabase(optionsFor(url), { logger: silentLogger });
    const history = new PgHistoryStore(db, opts.history);
    const state = new PgFeatureState(db, opts.state);
    return {
      history,
      state,
      close: async () => {
        await state.close();
        await history.close();
        await db.close();
      },
    };
  };
}

/** A store as one gateway process opens it: its own pools. */
function processOn(url: string, extra: Partial<PostgresOptions> = {}) {
  const db = new PgDatabase(optionsFor(url, extra), { logger: silentLogger });
  const options = db.options;
  return {
    db,
    history: new PgHistoryStore(db),
    state: new PgFeatureState(db),
    order: new PgTurnOrder(db, { connections: options.lock_connections, timeoutMs: options.lock_timeout_ms, timer: realTimer, now: Date.now }),
    close: () => db.close(),
  };
}

describe.runIf(tests.run)("store postgres", () => {
  useCluster(tests.found, (started) => {
    cluster = started;
  });

  durableStoreContract("postgres", async () => pgAt(await cluster.database()));
  gatewayStoreContract("postgres", async () => ({ store: "postgres", postgres: { url: await cluster.database() } }));

  describe("several processes on one database", () => {
    it("a history written through one process is read through another, and a change there is seen by the first one's next turn", async () => {
      const url = await cluster.database();
      const [a, b] = [processOn(url), processOn(url)];
      const key = "agent:main:http:shared";
      await a.history.append(key, [
        { role: "user", content: "q1" },
        { role: "assistant", content: "a1" },
      ]);
      // A holds the session in memory; B adds a turn.
      (await a.history.hold(key))();
      const release = await b.history.hold(key);
      expect(await b.history.get(key)).toHaveLength(2);
      await b.history.append(key, [
        { role: "user", content: "q2" },
        { role: "assistant", content: "a2" },
      ]);
      release();
      (await a.history.hold(key))();
      expect((await a.history.get(key)).map((m) => m.content)).toEqual(["q1", "a1", "q2", "a2"]);
      // A appends on what it read again, not over B's turn.
      await a.history.append(key, [
        { role: "user", content: "q3" },
        { role: "assistant", content: "a3" },
      ]);
      expect((await b.history.page(key, 100)).messages.map((m) => m.content)).toEqual(["q1", "a1", "q2", "a2", "q3", "a3"]);
      // B's memory is behind: its next append reads the session again first.
      await b.history.append(key, [
        { role: "user", content: "q4" },
        { role: "assistant", content: "a4" },
      ]);
      expect((await a.history.page(key, 100)).total).toBe(8);
      // A clear through A is seen by B.
      await a.history.clear(key);
      (await b.history.hold(key))();
      expect(await b.history.get(key)).toEqual([]);
      await Promise.all([a.close(), b.close()]);
    });

    it("turns of one session run one at a time across processes, in the order taken; other sessions run meanwhile", async () => {
      const url = await cluster.database();
      const [a, b] = [processOn(url), processOn(url)];
      const key = "agent:main:http:ordered";
      const log: string[] = [];
      let letFirstGo!: () => void;
      const firstHeld = new Promise<void>((resolve) => {
        void a.order.run(key, async () => {
          log.push("a starts");
          resolve();
          await new Promise<void>((go) => (letFirstGo = go));
          log.push("a ends");
        });
      });
      await firstHeld;
      const second = b.order.run(key, async () => {
        log.push("b runs");
      });
      // Another session is not held up by it, on either process.
      await within(
        "another session's turn on b",
        b.order.run("agent:main:http:other", async () => log.push("other runs")),
      );
      await within(
        "another session's turn on a",
        a.order.run("agent:main:http:third", async () => log.push("third runs")),
      );
      expect(log).toEqual(["a starts", "other runs", "third runs"]);
      letFirstGo();
      await within("b's turn after a's", second);
      expect(log).toEqual(["a starts", "other runs", "third runs", "a ends", "b runs"]);
      await Promise.all([a.close(), b.close()]);
    });

    it("a turn that waits past lock_timeout_ms for another process's turn fails with 503 store_unavailable, naming the key", async () => {
      const url = await cluster.database();
      const a = processOn(url);
      const b = processOn(url, { lock_timeout_ms: 200 });
      const key = "agent:main:http:busy";
      let release!: () => void;
      const holding = new Promise<void>((held) => {
        void a.order.run(key, () => {
          held();
          return new Promise<void>((go) => (release = go));
        });
      });
      await holding;
      let ran = false;
      await expect(
        b.order.run(key, async () => {
          ran = true;
        }),
      ).rejects.toMatchObject({ code: "store_unavailable", message: expect.stringContaining(`the turn of ${key} waited 200 ms`) });
      expect(ran).toBe(false);
      release();
      // The lock is free again: b's next turn runs.
      await within(
        "b's turn once a's ended",
        b.order.run(key, async () => "ran"),
      );
      await Promise.all([a.close(), b.close()]);
    });

    it("a process that dies lets go of its lock: the database ends its connection, and the other process's turn runs", async () => {
      const url = await cluster.database();
      const b = processOn(url);
      const key = "agent:main:http:dies";
      // A "process": a connection of its own holding the session's lock, then ended by the server, as a killed process's is.
      const dying = new pg.Client({ connectionString: url });
      dying.on("error", () => {});
      await dying.connect();
      const holder = (await dying.query("SELECT pg_backend_pid() AS pid")).rows[0].pid as number;
      await dying.query("SELECT pg_advisory_lock($1, hashtext($2))", [SESSION_LOCK_CLASS, key]);
      let ran = false;
      const waiting = b.order.run(key, async () => {
        ran = true;
      });
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      // b's turn waits in the database for the lock.
      await eventually(async () => {
        const { rows } = await admin.query("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
        expect(rows).toHaveLength(1);
      });
      expect(ran).toBe(false);
      await admin.query("SELECT pg_terminate_backend($1)", [holder]);
      await within("b's turn once the holder's connection ended", waiting);
      expect(ran).toBe(true);
      await dying.end().catch(() => {});
      await admin.end();
      await b.close();
    });

    it("two processes taking the same due run at one version: exactly one wins", async () => {
      const url = await cluster.database();
      const [a, b] = [processOn(url), processOn(url)];
      await a.state.put("cron", "job", { due: 1 }, 0);
      const results = await Promise.all([a.state.put("cron", "job", { by: "a" }, 1), b.state.put("cron", "job", { by: "b" }, 1)]);
      expect(results.filter((r) => r === 2)).toHaveLength(1);
      expect(results.filter((r) => r === undefined)).toHaveLength(1);
      const winner = results[0] === 2 ? "a" : "b";
      expect(await b.state.get("cron", "job")).toEqual({ key: "job", value: { by: winner }, version: 2 });
      await Promise.all([a.close(), b.close()]);
    });
  });

  describe("the schema", () => {
    it("several processes starting at once on an empty database migrate it once", async () => {
      const url = await cluster.database();
      const dbs = [1, 2, 3, 4].map(() => processOn(url).db);
      await Promise.all(dbs.map((db) => db.ready()));
      const rows = await dbs[0]!.query<{ version: number }>("test", "SELECT version FROM picoclaw_migrations ORDER BY version");
      expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
      await Promise.all(dbs.map((db) => db.close()));
    });

    it("a database migrated past what this gateway knows is refused, saying so", async () => {
      const url = await cluster.database();
      const first = processOn(url).db;
      await first.ready();
      await first.query("test", "INSERT INTO picoclaw_migrations (version, name) VALUES (999, 'from the future')");
      await first.close();
      const second = processOn(url).db;
      await expect(second.ready()).rejects.toMatchObject({
        code: "storage_failed",
        message: expect.stringContaining("schema is at version 999, newer than this gateway knows"),
      });
      await second.close();
    });
  });

  describe("the database going away", () => {
    it("while it is down, calls fail with store_unavailable and the probe says so; once it is back, everything works again", { timeout: 120_000 }, async () => {
      const url = await cluster.database();
      const p = processOn(url, { ready_timeout_ms: 5_000 });
      const key = "agent:main:http:outage";
      await p.history.append(key, [
        { role: "user", content: "before" },
        { role: "assistant", content: "ok" },
      ]);
      await p.db.probe();
      await cluster.stop();
      try {
        await expect(p.db.probe()).rejects.toMatchObject({ code: "store_unavailable" });
        await expect(p.history.append(key, [{ role: "user", content: "during" }])).rejects.toMatchObject({ code: "store_unavailable" });
        await expect(p.history.hold(key)).rejects.toMatchObject({ code: "store_unavailable" });
        await expect(p.state.put("cron", "x", 1)).rejects.toMatchObject({ code: "store_unavailable" });
        await expect(p.order.run(key, async () => {})).rejects.toMatchObject({ code: "store_unavailable" });
      } finally {
        await cluster.start();
      }
      await p.db.probe();
      await p.history.append(key, [
        { role: "user", content: "after" },
        { role: "assistant", content: "ok" },
      ]);
      expect((await p.history.page(key, 10)).messages.map((m) => m.content)).toEqual(["before", "ok", "after", "ok"]);
      await p.close();
    });
  });
});
