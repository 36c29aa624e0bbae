/** Error texts both todo styles give word for word (PicoClaw's). */
export const SHARED_ERRORS = {
  noContext: "todo requires an agent and session context",
  capacity: "todo session capacity reached; clear an obsolete plan before creating another",
} as const;
