/**
 * The gateway's own counters and histograms, kept in plain maps and written
 * in Prometheus' text format (version 0.0.4) when scraped. They count from
 * the first event without loading anything: prom-client, which writes
 * Node's own metrics beside them (memory, heap, event-loop lag), costs a
 * process ~2.5 MiB and ~30 ms to load, so it waits for the first scrape
 * (metrics.ts). Every label value comes from the config or a fixed set, so
 * the series are as few as before.
 */

export type Labels = Readonly<Record<string, string>>;

/** A label value as the text format quotes it: backslash, double quote and line feed escaped. */
function quoted(value: string): string {
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;
}

/** `a="x",b="y"`, every one of `names` in their order (a label not given is "", which Prometheus reads as absent). */
function labelText(names: readonly string[], labels: Labels): string {
  let text = "";
  for (const name of names) text += `${text === "" ? "" : ","}${name}=${quoted(String(labels[name] ?? ""))}`;
  return text;
}

function header(name: string, help: string, type: string): string {
  return `# HELP ${name} ${help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")}\n# TYPE ${name} ${type}\n`;
}

const braced = (inner: string) => (inner === "" ? "" : `{${inner}}`);

/** A number as the text format writes it. */
function numberText(value: number): string {
  if (value === Number.POSITIVE_INFINITY) return "+Inf";
  if (value === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(value);
}

/** A metric that counts up, one series per set of labels. */
export class CounterTally {
  private readonly series = new Map<string, number>();

  constructor(
    readonly name: string,
    private readonly help: string,
    private readonly labelNames: readonly string[],
  ) {}

  inc(labels: Labels, by = 1): void {
    // A count that is no finite number of at least 0 (a provider's odd usage) is not counted: it would spoil the series.
    if (!Number.isFinite(by) || by < 0) return;
    const key = labelText(this.labelNames, labels);
    this.series.set(key, (this.series.get(key) ?? 0) + by);
  }

  text(): string {
    let text = header(this.name, this.help, "counter");
    for (const [labels, value] of this.series) text += `${this.name}${braced(labels)} ${numberText(value)}\n`;
    return text;
  }
}

/** Observations counted into buckets (each `le` counts those at or under it), with their sum and count. */
export class HistogramTally {
  private readonly series = new Map<string, { counts: number[]; sum: number; count: number }>();

  constructor(
    readonly name: string,
    private readonly help: string,
    private readonly labelNames: readonly string[],
    private readonly buckets: readonly number[],
  ) {}

  observe(labels: Labels, value: number): void {
    if (!Number.isFinite(value)) return;
    const key = labelText(this.labelNames, labels);
    let found = this.series.get(key);
    if (!found) {
      found = { counts: new Array<number>(this.buckets.length + 1).fill(0), sum: 0, count: 0 };
      this.series.set(key, found);
    }
    let bucket = 0;
    while (bucket < this.buckets.length && value > (this.buckets[bucket] as number)) bucket++;
    (found.counts[bucket] as number)++;
    found.sum += value;
    found.count++;
  }

  text(): string {
    let text = header(this.name, this.help, "histogram");
    for (const [labels, { counts, sum, count }] of this.series) {
      const prefix = labels === "" ? "" : `${labels},`;
      let cumulative = 0;
      for (let i = 0; i <= this.buckets.length; i++) {
        cumulative += counts[i] as number;
        const le = i < this.buckets.length ? numberText(this.buckets[i] as number) : "+Inf";
        text += `${this.name}_bucket{${prefix}le="${le}"} ${cumulative}\n`;
      }
      text += `${this.name}_sum${braced(labels)} ${numberText(sum)}\n${this.name}_count${braced(labels)} ${count}\n`;
    }
    return text;
  }
}

/** A gauge read when scraped. */
export function gaugeText(name: string, help: string, value: number): string {
  return `${header(name, help, "gauge")}${name} ${numberText(value)}\n`;
}
