import path from "node:path";
import { z } from "zod";
import { type Tool, defineTool, toolResult } from "../../tools/tool.js";
import type { OpenedFile, Workspace } from "../../workspace/workspace.js";
import { looksBinary } from "./binary.js";
import { refusal } from "./refusal.js";

/**
 * `read_file`, PicoClaw's two forms (`tools.read_file.mode`): a byte window
 * (`offset`, `length`) or numbered lines (`start_line`, `max_lines`), each
 * within `max_read_file_size`, with PicoClaw's headers telling the model
 * where it is in the file and how to go on. A file is read a window at a
 * time, never whole. Binary files are refused in both forms.
 */

type WorkspaceOf = (agentId: string) => Promise<Workspace>;
type FileHandle = OpenedFile["handle"];

const BINARY = "file appears to be binary; read_file reads text files only";

export function readFileBytesTool(workspaceOf: WorkspaceOf, maxSize: number): Tool {
  return defineTool({
    name: "read_file",
    description: "Read the contents of a file. Supports pagination via `offset` and `length`.",
    parameters: z.strictObject({
      path: z.string().describe("Path to the file to read."),
      offset: z.int().optional().describe("Byte offset to start reading from."),
      length: z.int().optional().describe(`Maximum number of bytes to read (at most ${maxSize}).`),
    }),
    enabledByDefault: true,
    execute: async (args, ctx) => {
      const offset = args.offset ?? 0;
      if (offset < 0) return toolResult.error("offset must be >= 0");
      const length = Math.min(args.length ?? maxSize, maxSize);
      if (length <= 0) return toolResult.error("length must be > 0");
      return withFile(workspaceOf, ctx.agentId, args.path, async (file) => {
        if (looksBinary(await readAt(file.handle, 0, 512))) return toolResult.error(BINARY);
        // One byte more than asked tells whether the file goes on.
        const probe = await readAt(file.handle, offset, length + 1);
        const data = probe.subarray(0, length);
        if (data.length === 0) return toolResult.text("[END OF FILE - no content at this offset]");
        const end = offset + data.length;
        let header = `[file: ${path.basename(file.path)} | total: ${file.size} bytes | read: bytes ${offset}-${end - 1}]`;
        header +=
          probe.length > length
            ? `\n[TRUNCATED - file has more content. Call read_file again with offset=${end} to continue.]`
            : "\n[END OF FILE - no further content.]";
        return toolResult.text(`${header}\n\n${data.toString("utf8")}`);
      });
    },
  });
}

export function readFileLinesTool(workspaceOf: WorkspaceOf, maxSize: number): Tool {
  return defineTool({
    name: "read_file",
    description:
      "Read a UTF-8 text file from the filesystem. Output always includes line numbers in the format `LINE_NUMBER|LINE_CONTENT` (1-indexed). Supports partial reads via `start_line` and `max_lines` for large text files.",
    parameters: z.strictObject({
      path: z.string().describe("Path to the file to read."),
      start_line: z.int().optional().describe("Line number to start reading from (1-indexed, inclusive)."),
      max_lines: z.int().optional().describe("Maximum number of lines to read."),
    }),
    enabledByDefault: true,
    execute: async (args, ctx) => {
      const startLine = args.start_line ?? 1;
      if (startLine < 1) return toolResult.error("start_line must be >= 1");
      const limit = args.max_lines ?? -1;
      if (args.max_lines !== undefined && limit <= 0) return toolResult.error("max_lines, if provided, must be > 0");
      return withFile(workspaceOf, ctx.agentId, args.path, async (file) => {
        const lines = new LineReader(file.handle);
        if (looksBinary(await lines.sample(512))) return toolResult.error(BINARY);
        let index = 1;
        let reachedEnd = false;
        while (index < startLine) {
          if (!(await lines.skip())) {
            reachedEnd = true;
            break;
          }
          index++;
        }
        const out: Buffer[] = [];
        let read = 0;
        let fileBytes = 0;
        let outputBytes = 0;
        let budgetCut = false;
        let lineCut = false;
        while (!reachedEnd && (limit < 0 || read < limit)) {
          const prefix = `${index}|`;
          const room = maxSize - outputBytes - prefix.length;
          if (room <= 0) {
            budgetCut = true;
            break;
          }
          const line = await lines.next(room);
          if (!line) {
            reachedEnd = true;
            break;
          }
          out.push(Buffer.from(prefix), line.bytes);
          fileBytes += line.bytes.length;
          outputBytes += prefix.length + line.bytes.length;
          read++;
          index++;
          if (!line.complete) {
            budgetCut = true;
            lineCut = true;
            break;
          }
        }
        if (!reachedEnd && !lineCut && !(await lines.more())) {
          reachedEnd = true;
          budgetCut = false;
        }
        if (read === 0) return toolResult.text(`[END OF FILE - no content at or after start_line=${startLine}]`);
        const endLine = startLine + read - 1;
        let header = `[file: ${path.basename(file.path)} | read: lines ${startLine}-${endLine} (1-indexed) | file_bytes: ${fileBytes} | output_bytes: ${outputBytes}]`;
        const next = startLine + read;
        if (lineCut) header += `\n[TRUNCATED - line ${endLine} exceeded the ${maxSize} byte read budget and was cut mid-line.]`;
        else if (budgetCut) {
          header += `\n[TRUNCATED - byte budget reached. Call read_file again with start_line=${next}${limit > 0 ? ` and max_lines=${limit}` : ""} to continue at the next line.]`;
        } else if (!reachedEnd && limit > 0 && read >= limit) {
          header += `\n[PARTIAL - more content remains. Call read_file again with start_line=${next} and max_lines=${limit} to continue.]`;
        } else header += "\n[END OF FILE - no further content.]";
        return toolResult.text(`${header}\n\n${Buffer.concat(out).toString("utf8")}`);
      });
    },
  });
}

/** Runs `work` on the opened file, closing it after; a refused or missing path is an error result. */
async function withFile<T>(
  workspaceOf: WorkspaceOf,
  agentId: string,
  input: string,
  work: (file: OpenedFile) => Promise<T>,
): Promise<T | ReturnType<typeof toolResult.error>> {
  let file: OpenedFile;
  try {
    file = await (await workspaceOf(agentId)).openFile(input);
  } catch (error) {
    return refusal(error);
  }
  try {
    return await work(file);
  } finally {
    await file.handle.close();
  }
}

async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await handle.read(buffer, filled, length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

const CHUNK = 32 * 1024;

/** A file's lines, read a chunk at a time from its start (a huge file is never read whole). */
class LineReader {
  private buffer: Buffer = Buffer.alloc(0);
  private position = 0;
  private ended = false;

  constructor(private readonly handle: FileHandle) {}

  private async fill(): Promise<boolean> {
    if (this.ended) return false;
    const chunk = await readAt(this.handle, this.position, CHUNK);
    this.position += chunk.length;
    if (chunk.length === 0) {
      this.ended = true;
      return false;
    }
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    return true;
  }

  /** The file's first bytes, left to be read. */
  async sample(bytes: number): Promise<Buffer> {
    while (this.buffer.length < bytes && (await this.fill())) {}
    return this.buffer.subarray(0, bytes);
  }

  /** Skips a line; false at the end of the file. */
  async skip(): Promise<boolean> {
    let seen = false;
    for (;;) {
      const newline = this.buffer.indexOf(0x0a);
      if (newline >= 0) {
        this.buffer = this.buffer.subarray(newline + 1);
        return true;
      }
      if (this.buffer.length > 0) seen = true;
      this.buffer = Buffer.alloc(0);
      if (!(await this.fill())) return seen;
    }
  }

  /** The next line (with its newline) up to `maxBytes`; `complete` false when it was cut (the rest is not read). */
  async next(maxBytes: number): Promise<{ bytes: Buffer; complete: boolean } | undefined> {
    for (;;) {
      const newline = this.buffer.indexOf(0x0a);
      const end = newline >= 0 ? newline + 1 : this.buffer.length;
      if (end > maxBytes) {
        const bytes = Buffer.from(this.buffer.subarray(0, maxBytes));
        this.buffer = this.buffer.subarray(maxBytes);
        return { bytes, complete: false };
      }
      if (newline >= 0) {
        const bytes = Buffer.from(this.buffer.subarray(0, end));
        this.buffer = this.buffer.subarray(end);
        return { bytes, complete: true };
      }
      if (!(await this.fill())) {
        if (this.buffer.length === 0) return undefined;
        const bytes = Buffer.from(this.buffer);
        this.buffer = Buffer.alloc(0);
        return { bytes, complete: true };
      }
    }
  }

  /** Whether anything is left. */
  async more(): Promise<boolean> {
    return this.buffer.length > 0 || (await this.fill());
  }
}
