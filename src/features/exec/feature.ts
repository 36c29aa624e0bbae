import { ConfigError } from "../../errors.js";
import { BUILT_IN_ORIGIN, defineFeature } from "../../port/feature.js";
import { execSection } from "./config.js";
import { DEFAULT_DENY_PATTERNS } from "./deny-patterns.js";
import { execTool } from "./exec-tool.js";
import { findBwrap } from "./sandbox.js";

/**
 * `exec` (`tools.exec`): shell commands in the agent's workspace, behind
 * the safety guard, killed with their process group on time, their output
 * bounded, their environment scrubbed, turns from chat channels refused
 * unless `allow_remote`; under bubblewrap with `sandbox: "bwrap"`. On by
 * default, each call under approval "ask": a person says yes first.
 */
export const execFeature = defineFeature({
  name: "exec",
  needs: ["workspace", "processEnv", "isChatSession", "clock"],
  config: { tools: { exec: execSection } },
  setup(host, config) {
    const section = config.tools.exec;
    // The config's check compiled each one already.
    const deny = section.enable_deny_patterns ? [...DEFAULT_DENY_PATTERNS, ...section.custom_deny_patterns.map((p) => new RegExp(p))] : [];
    const exempt = section.custom_allow_patterns.map((p) => new RegExp(p));
    let bwrap: string | undefined;
    if (section.enabled && section.sandbox === "bwrap") {
      bwrap = findBwrap(host.processEnv.PATH);
      if (!bwrap) throw new ConfigError(['tools.exec.sandbox: "bwrap" needs bubblewrap, and no bwrap is on PATH (Debian and Ubuntu: apt install bubblewrap)']);
    }
    const warnings =
      section.enabled && !section.enable_deny_patterns ? ["tools.exec.enable_deny_patterns is false: exec runs any command the model writes"] : [];
    return {
      origin: () => BUILT_IN_ORIGIN,
      warnings,
      tools: [
        execTool({
          config: section,
          rules: { deny, exempt, allowed: new Set(section.allowed_commands) },
          workspaceOf: (agentId) => host.workspace(agentId),
          isChatSession: (key) => host.isChatSession(key),
          env: host.processEnv,
          bwrap,
          now: () => host.clock.now(),
        }),
      ],
    };
  },
});
