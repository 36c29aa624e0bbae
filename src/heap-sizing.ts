import { PerformanceObserver } from "node:perf_hooks";
import v8 from "node:v8";

/** How the gateway process sizes its V8 heap (gateway.limits.young_generation_mib, heap_growing_percent). */
export interface HeapSizing {
  /** The most the young generation (both semi-spaces together) grows to, in MiB; 0: V8's own sizing. */
  youngGenerationMiB: number;
  /** How far the old generation grows past what its last full collection kept before the next one, in percent; 0: V8's own. */
  heapGrowingPercent: number;
}

const MiB = 1024 * 1024;

/** V8's young generation now: both semi-spaces' capacity, in bytes. */
export function youngGenerationBytes(): number {
  return v8.getHeapSpaceStatistics().find((space) => space.space_name === "new_space")?.space_size ?? 0;
}

/**
 * Sizes this process's V8 heap for a long-running gateway, whose pages V8
 * keeps once it has touched them (RSS is the heap's high-water mark):
 *
 * - V8 doubles the young generation under sustained allocation, from 2 to
 *   32 MiB (two semi-spaces of 16), and gives the pages back only under
 *   memory pressure. A gateway's turns allocate a few hundred KiB each and
 *   keep little of it, so a small young generation collects the same
 *   garbage, more often: its growth is stopped at `youngGenerationMiB`
 *   (`--semi-space-growth-factor=1` from the collection that reached it;
 *   growth resumes if V8 ever shrinks it below).
 * - Between full collections V8 lets the old generation grow by a factor
 *   up to 4 of what the last one kept; `heapGrowingPercent` fixes it
 *   (`--heap-growing-percent`), so the garbage promoted between two full
 *   collections stays a fraction of what is live.
 *
 * Both flags are ones V8 reads each time it resizes, so they take effect
 * although the heap exists already. `youngGenerationMiB` 0 gives the young
 * generation back to V8's own sizing (V8's growth factor, 2). Returns what
 * stops watching.
 */
export function sizeHeap(sizing: HeapSizing): () => void {
  if (sizing.heapGrowingPercent > 0) v8.setFlagsFromString(`--heap-growing-percent=${sizing.heapGrowingPercent}`);
  if (sizing.youngGenerationMiB === 0) {
    v8.setFlagsFromString("--semi-space-growth-factor=2");
    return () => {};
  }
  const cap = sizing.youngGenerationMiB * MiB;
  let frozen: boolean | undefined;
  const check = () => {
    const full = youngGenerationBytes() >= cap;
    if (full === frozen) return;
    frozen = full;
    v8.setFlagsFromString(`--semi-space-growth-factor=${full ? 1 : 2}`);
  };
  // After every collection: the young generation grows only in one.
  const observer = new PerformanceObserver(check);
  observer.observe({ entryTypes: ["gc"] });
  check();
  return () => observer.disconnect();
}
