import { type Counter, Registry, collectDefaultMetrics } from "prom-client";

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
    // prom-client's CPU counters count from when they are made; the process's CPU before then is added, so that they
    // are the process's total as Prometheus expects (a gateway scraped first after a day has used CPU for a day).
    const before = process.cpuUsage();
    collectDefaultMetrics({ register: this.registry });
    const spent: [string, number][] = [
      ["process_cpu_user_seconds_total", before.user],
      ["process_cpu_system_seconds_total", before.system],
      ["process_cpu_seconds_total", before.user + before.system],
    ];
    for (const [name, micros] of spent) (this.registry.getSingleMetric(name) as Counter | undefined)?.inc(micros / 1e6);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
