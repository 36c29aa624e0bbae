import type { ModelProvider, ModelRequest, ModelResponse } from "../../src/models/provider.js";
import { abortReason } from "../../src/errors.js";
import { within } from "./wait.js";

export interface PendingCall {
  request: ModelRequest;
  resolve(response: Partial<ModelResponse>): void;
  reject(error: unknown): void;
}

/**
 * An in-process model whose every call waits until the test answers it,
 * so tests decide the order things happen in. An abort rejects at once.
 */
export class ControlledModel implements ModelProvider {
  readonly pending: PendingCall[] = [];
  private waiters: (() => void)[] = [];

  constructor(readonly name = "controlled") {}

  chat(request: ModelRequest): Promise<ModelResponse> {
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(abortReason(request.signal));
      if (request.signal.aborted) return onAbort();
      request.signal.addEventListener("abort", onAbort, { once: true });
      this.pending.push({
        request,
        resolve: (r) => {
          request.signal.removeEventListener("abort", onAbort);
          resolve({ text: null, toolCalls: [], modelName: this.name, ...r });
        },
        reject,
      });
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  /** Resolves when at least `count` calls have arrived in total (fails, saying how many did, if they do not). */
  async calls(count: number): Promise<PendingCall[]> {
    const arrived = async () => {
      while (this.pending.length < count) await new Promise<void>((resolve) => this.waiters.push(resolve));
    };
    await within(`${count} calls of the ${this.name} model`, arrived(), { instead: () => `it got ${this.pending.length}` });
    return this.pending;
  }

  /** The last user message text of a call. */
  static lastUser(call: PendingCall): string {
    const users = call.request.messages.filter((m) => m.role === "user");
    return (users.at(-1) as { content: string } | undefined)?.content ?? "";
  }
}

/** A model source that serves one provider for every model_name. */
export const single = (provider: ModelProvider) => ({ get: () => provider });
