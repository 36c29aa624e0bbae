import type { Tracer } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from "@opentelemetry/semantic-conventions";
import type { Logger } from "../log.js";

/**
 * OpenTelemetry's SDK with its OTLP/HTTP exporter (JSON), loaded with
 * `import()` only when `telemetry.otlp.endpoint` is set. The provider is
 * this gateway's own (never registered as the process's global one); ended
 * spans wait in a bounded queue and go out in bounded batches.
 */

export interface ExportSettings {
  endpoint: string;
  headers: Readonly<Record<string, string>>;
  serviceName: string;
  serviceVersion: string;
  timeoutMs: number;
  maxQueueSpans: number;
  maxBatchSpans: number;
  batchDelayMs: number;
  logger: Logger;
  redact(text: string): string;
}

export interface TraceExport {
  tracer: Tracer;
  /** Sends what is queued, then stops. */
  close(): Promise<void>;
}

/** Minutes between two warnings about failed exports (a collector that is down must not flood the log). */
const WARN_EVERY_MS = 60_000;

export function startTraceExport(settings: ExportSettings, now: () => number = Date.now): TraceExport {
  const otlp = new OTLPTraceExporter({ url: settings.endpoint, headers: { ...settings.headers }, timeoutMillis: settings.timeoutMs });
  let warnedAt: number | undefined;
  let failed = 0;
  // What the exporter says of a failed export, scrubbed and at most once a minute (never its headers: they are the config's secrets).
  const exporter: SpanExporter = {
    export(spans: ReadableSpan[], done) {
      otlp.export(spans, (result) => {
        // 0 is ExportResultCode.SUCCESS (@opentelemetry/core, not a dependency of ours).
        if (result.code !== 0) {
          failed += spans.length;
          if (warnedAt === undefined || now() - warnedAt >= WARN_EVERY_MS) {
            warnedAt = now();
            const why = result.error ? settings.redact(result.error.message) : "unknown error";
            settings.logger.warn(`traces: export to the OTLP endpoint failed: ${why}`, { spans_lost: failed });
            failed = 0;
          }
        }
        done(result);
      });
    },
    shutdown: () => otlp.shutdown(),
    forceFlush: () => otlp.forceFlush(),
  };
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName, [ATTR_SERVICE_VERSION]: settings.serviceVersion }),
    spanProcessors: [
      new BatchSpanProcessor(exporter, {
        maxQueueSize: settings.maxQueueSpans,
        maxExportBatchSize: settings.maxBatchSpans,
        scheduledDelayMillis: settings.batchDelayMs,
        exportTimeoutMillis: settings.timeoutMs,
      }),
    ],
  });
  return { tracer: provider.getTracer("picoclaw", settings.serviceVersion), close: () => provider.shutdown() };
}
