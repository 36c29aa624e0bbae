/**
 * The session store contract (test/support/store-contract.ts) run against
 * the JSONL store on real files; test/process/postgres-store.test.ts runs
 * the same suite against Postgres.
 */
import { JsonlFeatureState } from "../../src/session/jsonl/jsonl-state.js";
import { JsonlHistoryStore } from "../../src/session/jsonl/jsonl-store.js";
import { tempDir } from "../support/project.js";
import { type StoreOpener, durableStoreContract, gatewayStoreContract } from "../support/store-contract.js";

const jsonlAt =
  (dir: string): StoreOpener =>
  (opts = {}) => {
    const history = JsonlHistoryStore.open({ dir, ...opts.history });
    const state = new JsonlFeatureState(dir, opts.state);
    return {
      history,
      state,
      close: async () => {
        await state.close();
        await history.close();
      },
    };
  };

durableStoreContract("jsonl", async () => jsonlAt(tempDir()));
gatewayStoreContract("jsonl", async () => ({ store: "jsonl" }));
