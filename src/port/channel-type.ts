import type { ChannelEntry } from "../config/channel-schema.js";
import type { ChannelChoice } from "../config/layout.js";
import type { Feature } from "./feature.js";

/**
 * A chat channel type as it registers: `type` (what a `channel_list`
 * entry names), its entry's schema (made with `channelEntry`, so `name`
 * and `agent` are there), the secrets and PicoClaw reading of an entry,
 * and the feature that runs one entry. The composition root makes one
 * feature per entry; the runtime names no channel.
 */
export interface ChannelType extends ChannelChoice {
  /** The feature that runs `entry`; `path` is where the entry stands (`channel_list[0]`), for messages. */
  create(entry: ChannelEntry, path: string): Feature;
}
