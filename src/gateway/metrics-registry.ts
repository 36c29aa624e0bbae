import { Registry, collectDefaultMetrics } from "prom-client";

/**
 * Node's own metrics (process memory and CPU, heap, event-loop lag) from
 * prom-client's default collectors, on a registry of the gateway's own
 * (never prom-client's global one). Loaded with `import()` at the first
 * scrape (metrics.ts): prom-client costs a process ~2.5 MiB and ~30 ms,
 * which a gateway nobody scrapes never pays. The gateway's own series are
 * counted without it (metrics-tally.ts).
 */
export class MetricsRegistry {
  readonly registry = new Registry();

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
