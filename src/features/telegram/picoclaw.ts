/** PicoClaw's Telegram entry (`{type, enabled, allow_from, agent, settings: {token, streaming: {enabled, throttle_seconds}, base_url}}`, under its name) as ours. */
export function telegramFromPicoclaw(name: string, entry: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);
  const settings = isObject(entry.settings) ? entry.settings : {};
  const streaming = isObject(settings.streaming) ? settings.streaming.enabled : settings.streaming;
  const throttle = isObject(settings.streaming) ? settings.streaming.throttle_seconds : undefined;
  return {
    name,
    type: "telegram",
    ...(settings.token !== undefined ? { token: settings.token } : {}),
    ...(entry.allow_from !== undefined ? { allow_from: entry.allow_from } : {}),
    ...(entry.agent !== undefined ? { agent: entry.agent } : {}),
    ...(typeof streaming === "boolean" ? { streaming } : {}),
    ...(typeof throttle === "number" && throttle > 0 ? { streaming_interval_ms: throttle * 1000 } : {}),
    ...(typeof settings.base_url === "string" && settings.base_url !== "" ? { api_root: settings.base_url } : {}),
  };
}
