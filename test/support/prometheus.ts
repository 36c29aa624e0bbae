/**
 * A strict reader of Prometheus' text format (version 0.0.4): every line is
 * a `# HELP`, a `# TYPE` or a sample, each sample's metric was given a
 * TYPE first, and label values are quoted strings. It throws naming the
 * first line that is none of them.
 */
export interface Scrape {
  /** The sample's value (labels given in any order; unlisted labels must be absent), or undefined. */
  value(name: string, labels?: Record<string, string>): number | undefined;
  /** Every sample of a metric (name as written, `_bucket`/`_count`/`_sum` included). */
  samples(name: string): { labels: Record<string, string>; value: number }[];
  /** `# TYPE` of each metric family. */
  types: Map<string, string>;
}

const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)(?: -?\\d+)?$`);
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/y;

export function parsePrometheus(text: string): Scrape {
  const types = new Map<string, string>();
  const all: { name: string; labels: Record<string, string>; value: number }[] = [];
  for (const [index, line] of text.split("\n").entries()) {
    if (line === "") continue;
    const fail = (why: string) => new Error(`line ${index + 1} (${JSON.stringify(line)}): ${why}`);
    const meta = new RegExp(`^# (HELP|TYPE) (${NAME})(?: (.*))?$`).exec(line);
    if (meta) {
      if (meta[1] === "TYPE") {
        if (!["counter", "gauge", "histogram", "summary", "untyped"].includes(meta[3] ?? "")) throw fail("unknown type");
        types.set(meta[2]!, meta[3]!);
      }
      continue;
    }
    const sample = SAMPLE.exec(line);
    if (!sample) throw fail("neither a comment nor a sample");
    const [, name, rawLabels = "", rawValue] = sample;
    const family = [...types.keys()].find((f) => name === f || [`${f}_bucket`, `${f}_count`, `${f}_sum`, `${f}_total`].includes(name!));
    if (!family) throw fail("a sample before its metric's TYPE");
    const labels: Record<string, string> = {};
    LABEL.lastIndex = 0;
    while (LABEL.lastIndex < rawLabels.length) {
      const start = LABEL.lastIndex;
      const label = LABEL.exec(rawLabels);
      if (!label || label.index !== start) throw fail("bad labels");
      labels[label[1]!] = label[2]!.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    }
    // As Prometheus reads it (Go's ParseFloat): NaN and Inf in any case; prom-client writes a histogram's empty mean as "Nan".
    const word = rawValue!.toLowerCase();
    const value = word === "nan" ? Number.NaN : /^[+-]?inf$/.test(word) ? (word.startsWith("-") ? -1 : 1) * Number.POSITIVE_INFINITY : Number(rawValue);
    if (Number.isNaN(value) && word !== "nan") throw fail("bad value");
    all.push({ name: name!, labels, value });
  }
  const same = (a: Record<string, string>, b: Record<string, string>) =>
    Object.keys(a).length === Object.keys(b).length && Object.entries(b).every(([k, v]) => a[k] === v);
  return {
    types,
    samples: (name) => all.filter((s) => s.name === name).map(({ labels, value }) => ({ labels, value })),
    value: (name, labels = {}) => all.find((s) => s.name === name && same(s.labels, labels))?.value,
  };
}
