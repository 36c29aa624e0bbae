// A plugin tool: the current date and time in any time zone.
// Enable it with  "tools": { "plugins": ["./examples/tools/clock.js"] }
import { defineTool, toolResult, z } from "picoclaw-ts";

export default defineTool({
  name: "clock",
  description:
    "The current date and time. Give time_zone as an IANA name (Europe/Paris, America/New_York, Asia/Tokyo) for local time there; the default is UTC.",
  parameters: z.object({
    time_zone: z.string().min(1).optional().describe("IANA time zone name, e.g. Europe/Paris"),
  }),
  execute: ({ time_zone = "UTC" }) => {
    let formatted;
    try {
      formatted = new Intl.DateTimeFormat("en-GB", { timeZone: time_zone, dateStyle: "full", timeStyle: "long" }).format(new Date());
    } catch {
      return toolResult.error(`unknown time zone "${time_zone}"; use an IANA name such as Europe/Paris or America/New_York`);
    }
    return toolResult.text(`${formatted} (${time_zone})`);
  },
});
