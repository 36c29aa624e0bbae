import { z } from "zod";

const int = (min: number, max: number) => z.int().min(min).max(max);

const httpUrl = z
  .string()
  .refine((text) => URL.canParse(text) && ["http:", "https:"].includes(new URL(text).protocol), { message: "must be an http:// or https:// URL" });

/**
 * `telemetry`: OpenTelemetry traces over OTLP/HTTP. Off unless
 * `otlp.endpoint` is set; the SDK is loaded only then.
 */
export const telemetrySchema = z
  .strictObject({
    service_name: z.string().min(1).max(200).default("picoclaw").describe("The traces' service.name."),
    capture_content: z
      .boolean()
      .default(false)
      .describe("Whether spans carry the user's message, the model's reply and tool output (false: only ids, names, models, counts and timings)."),
    otlp: z
      .strictObject({
        endpoint: httpUrl
          .optional()
          .describe("The OTLP/HTTP traces URL (e.g. http://127.0.0.1:4318/v1/traces); unset, no traces are made and nothing of OpenTelemetry's SDK is loaded."),
        headers: z
          .record(z.string(), z.string())
          .default({})
          .describe("Headers sent with every export (an API key): each value is a secret, masked by config check and never logged."),
        timeout_ms: int(100, 120_000).default(10_000).describe("Time one export request may take, in ms."),
        max_queue_spans: int(1, 1_000_000)
          .default(2_048)
          .describe("Ended spans waiting to be exported at most; past it new spans are dropped (a collector that is down never grows memory)."),
        max_batch_spans: int(1, 100_000).default(512).describe("Spans sent in one export request at most."),
        batch_delay_ms: int(10, 600_000).default(5_000).describe("Longest wait before a batch of ended spans is sent, in ms."),
      })
      .refine((otlp) => otlp.max_batch_spans <= otlp.max_queue_spans, { path: ["max_batch_spans"], message: "must not be more than max_queue_spans" })
      .prefault({}),
  })
  .prefault({});

export type TelemetryConfig = z.infer<typeof telemetrySchema>;
