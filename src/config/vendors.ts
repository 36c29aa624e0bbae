/**
 * PicoClaw's model vendors that PicoClaw-TS does not serve: they need an
 * account login or a protocol of their own. Each provider lists the vendors
 * it serves itself (models/providers.ts), with their default `api_base`.
 */
/** PicoClaw vendors that need an account login or a protocol of their own, which PicoClaw-TS does not speak. */
export const UNSUPPORTED_VENDORS = ["azure", "bedrock", "antigravity", "github-copilot", "claude-cli", "codex-cli", "gpt4free", "elevenlabs"] as const;
