/**
 * The commands exec refuses unless `tools.exec.enable_deny_patterns` is
 * false: PicoClaw's default deny patterns (its `defaultDenyPatterns`, all 41,
 * the same regexes), then a few of ours for forms theirs miss. They are
 * matched against the lower-cased command line and against each command in
 * it, written out plainly (quotes and escapes removed, the program's folder
 * dropped), inside `sh -c` and `eval` scripts too. A tripwire, not a
 * sandbox: `sandbox: "bwrap"` is what confines a command.
 *
 * As in PicoClaw, `<<\s*EOF` is matched against the lower-cased line and so
 * never matches: heredocs run, in both.
 */
export const PICOCLAW_DENY_PATTERNS: readonly RegExp[] = [
  /\brm\s+-[rf]{1,2}\b/,
  /\bdel\s+\/[fq]\b/,
  /\brmdir\s+\/s\b/,
  /(^|[^-\w])\b(format|mkfs|diskpart)\b\s/,
  /\bdd\s+if=/,
  />\s*\/dev\/(sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|loop\d|dm-\d|md\d|sr\d|nbd\d)/,
  /\b(shutdown|reboot|poweroff)\b/,
  /:\(\)\s*\{.*\};\s*:/,
  /\$\([^)]+\)/,
  /\$\{[^}]+\}/,
  /`[^`]+`/,
  /\|\s*sh\b/,
  /\|\s*bash\b/,
  /;\s*rm\s+-[rf]/,
  /&&\s*rm\s+-[rf]/,
  /\|\|\s*rm\s+-[rf]/,
  /<<\s*EOF/,
  /\$\(\s*cat\s+/,
  /\$\(\s*curl\s+/,
  /\$\(\s*wget\s+/,
  /\$\(\s*which\s+/,
  /\bsudo\b/,
  /\bchmod\s+[0-7]{3,4}\b/,
  /\bchown\b/,
  /\bpkill\b/,
  /\bkillall\b/,
  /\bkill\b/,
  /\bcurl\b.*\|\s*(sh|bash)/,
  /\bwget\b.*\|\s*(sh|bash)/,
  /\bnpm\s+install\s+-g\b/,
  /\bpip\s+install\s+--user\b/,
  /\bapt\s+(install|remove|purge)\b/,
  /\byum\s+(install|remove)\b/,
  /\bdnf\s+(install|remove)\b/,
  /\bdocker\s+run\b/,
  /\bdocker\s+exec\b/,
  /\bgit\s+push\b/,
  /\bgit\s+force\b/,
  /\bssh\b.*@/,
  /\beval\b/,
  /\bsource\s+.*\.sh\b/,
];

/** Ours, for what PicoClaw's let through: rm's long options, mkfs.<type>, dd onto a device, a pipe into another shell. */
export const OUR_DENY_PATTERNS: readonly RegExp[] = [
  /\brm\s+(?:-\S+\s+)*--(?:recursive|force)\b/,
  /\bmkfs\.\w+/,
  /\bdd\b.*\bof=\/dev\//,
  /\|\s*(?:dash|zsh|ksh|ash|fish)\b/,
];

export const DEFAULT_DENY_PATTERNS: readonly RegExp[] = [...PICOCLAW_DENY_PATTERNS, ...OUR_DENY_PATTERNS];
