/**
 * PicoClaw's Discord entry (`{type, enabled, allow_from, agent,
 * group_trigger: {mention_only, prefixes}, placeholder, typing,
 * reasoning_channel_id, settings: {token, proxy, mention_only}}`, under its
 * name; an older file has `token` beside `type`) as ours. What PicoClaw
 * has and this channel does not is left out, with a note naming it.
 */
export function discordFromPicoclaw(name: string, entry: Readonly<Record<string, unknown>>, notes: string[] = []): Record<string, unknown> {
  const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);
  const settings = isObject(entry.settings) ? entry.settings : {};
  const trigger = isObject(entry.group_trigger) ? entry.group_trigger : {};
  const token = settings.token ?? entry.token;
  const mentionOnly = typeof trigger.mention_only === "boolean" ? trigger.mention_only : settings.mention_only === true ? true : undefined;
  const ignored = [
    ...["placeholder", "typing", "reasoning_channel_id"].filter((key) => entry[key] !== undefined && entry[key] !== "" && isSet(entry[key])),
    ...(Array.isArray(trigger.prefixes) && trigger.prefixes.length > 0 ? ["group_trigger.prefixes"] : []),
    ...(typeof settings.proxy === "string" && settings.proxy !== "" ? ["settings.proxy"] : []),
  ];
  if (ignored.length > 0)
    notes.push(`channel_list.${name}: ${ignored.join(", ")} ${ignored.length === 1 ? "is" : "are"} PicoClaw's and not read here; ignored`);
  return {
    name,
    type: "discord",
    ...(token !== undefined ? { token } : {}),
    ...(entry.allow_from !== undefined ? { allow_from: entry.allow_from } : {}),
    ...(entry.agent !== undefined ? { agent: entry.agent } : {}),
    ...(mentionOnly !== undefined ? { group_trigger: { mention_only: mentionOnly } } : {}),
  };
}

/** A PicoClaw option that does something: not `{enabled: false}`. */
function isSet(value: unknown): boolean {
  return !(value !== null && typeof value === "object" && (value as { enabled?: unknown }).enabled === false);
}
