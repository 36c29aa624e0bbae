import { BUILT_IN_ORIGIN, defineFeature } from "../../port/feature.js";
import { appendFileSection, editFileSection, listDirSection, readFileSection, writeFileSection } from "./config.js";
import { editFileTool } from "./edit-file.js";
import { listDirTool } from "./list-dir.js";
import { readFileBytesTool, readFileLinesTool } from "./read-file.js";
import { appendFileTool, writeFileTool } from "./write-tools.js";

/**
 * The file tools, PicoClaw's names and parameters: `read_file`,
 * `write_file`, `edit_file`, `append_file`, `list_dir`, each on by default
 * and switched by its `tools.<name>` section. Every path goes through the
 * agent's workspace (src/workspace/): confined to it (and the allow lists)
 * unless `agents.defaults.restrict_to_workspace` is off, judged by what was
 * opened, written atomically, regular files only.
 */
export const filesFeature = defineFeature({
  name: "files",
  needs: ["workspace"],
  config: {
    tools: {
      read_file: readFileSection,
      write_file: writeFileSection,
      edit_file: editFileSection,
      append_file: appendFileSection,
      list_dir: listDirSection,
    },
  },
  setup(host, config) {
    const { read_file, write_file, edit_file, append_file, list_dir } = config.tools;
    const workspaceOf = (agentId: string) => host.workspace(agentId);
    return {
      origin: () => BUILT_IN_ORIGIN,
      tools: [
        read_file.mode === "lines"
          ? readFileLinesTool(workspaceOf, read_file.max_read_file_size)
          : readFileBytesTool(workspaceOf, read_file.max_read_file_size),
        writeFileTool(workspaceOf, write_file.max_bytes),
        editFileTool(workspaceOf, edit_file.max_file_bytes),
        appendFileTool(workspaceOf, append_file.max_bytes),
        listDirTool(workspaceOf, list_dir.max_entries),
      ],
    };
  },
});
