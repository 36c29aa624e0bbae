import { describe, expect, it } from "vitest";
import { parseListMarkdown, renderListMarkdown } from "../../src/features/todo/list/markdown.js";
import { listAsPhases } from "../../src/features/todo/plans.js";
import { parsePhasesMarkdown, renderPhasesMarkdown } from "../../src/features/todo/phases/markdown.js";
import type { TaskStatus } from "../../src/features/todo/markdown.js";
import type { PhasePlan } from "../../src/features/todo/phases/plan.js";
import type { TodoItem } from "../../src/features/todo/list/validate.js";

const task = (content: string, status: TaskStatus = "pending") => ({ content, status });
const sample: PhasePlan = [
  { name: "Build", tasks: [task("Design", "completed"), task("Write tests", "in_progress"), task("Benchmark", "abandoned")] },
  { name: "Release", tasks: [task("Ship")] },
];
const SAMPLE_MD = "# Build\n- [x] Design\n- [/] Write tests\n- [-] Benchmark\n\n# Release\n- [ ] Ship";

function parsed(text: string) {
  const result = parsePhasesMarkdown(text);
  expect(result.errors).toEqual([]);
  return result.phases;
}

const statusOf = (line: string) => parsed(line)[0]!.tasks[0]!.status;

describe("phases markdown: render", () => {
  it("writes a heading per phase and a marked line per task", () => {
    expect(renderPhasesMarkdown(sample)).toBe(SAMPLE_MD);
  });

  it("a plan with no phase is # Todos; phases with no task render their headings", () => {
    expect(renderPhasesMarkdown([])).toBe("# Todos");
    expect(renderPhasesMarkdown([{ name: "A", tasks: [] }])).toBe("# A");
    expect(
      renderPhasesMarkdown([
        { name: "A", tasks: [] },
        { name: "B", tasks: [] },
      ]),
    ).toBe("# A\n\n# B");
  });

  it("an empty phase beside others is its heading alone", () => {
    expect(
      renderPhasesMarkdown([
        { name: "A", tasks: [] },
        { name: "B", tasks: [task("x")] },
      ]),
    ).toBe("# A\n\n# B\n- [ ] x");
  });
});

describe("phases markdown: parse", () => {
  it("reads back what it renders", () => {
    expect(parsed(SAMPLE_MD)).toEqual(sample);
  });

  it.each([
    ["[ ]", "pending"],
    ["[]", "pending"],
    ["[/]", "in_progress"],
    ["[>]", "in_progress"],
    ["[~]", "abandoned"],
    ["[x]", "completed"],
    ["[X]", "completed"],
    ["[-]", "abandoned"],
    ["\\[x\\]", "completed"],
    ["\\[ \\]", "pending"],
    ["\\[-\\]", "abandoned"],
    ["\\[/\\]", "in_progress"],
  ])("marker %s is %s", (marker, status) => {
    expect(statusOf(`- ${marker} task`)).toBe(status);
  });

  it.each(["-", "*", "+"])("bullet %s starts a task", (bullet) => {
    expect(parsed(`# P\n${bullet} [ ] task`)).toEqual([{ name: "P", tasks: [task("task")] }]);
  });

  it.each([1, 2, 3, 4, 5, 6])("a heading of %i hashes starts a phase", (level) => {
    expect(parsed(`${"#".repeat(level)} Phase\n- [ ] t`)[0]!.name).toBe("Phase");
  });

  it("tasks before any heading go to a phase Todos", () => {
    expect(parsed("- [ ] a\n# Later\n- [x] b")).toEqual([
      { name: "Todos", tasks: [task("a")] },
      { name: "Later", tasks: [task("b", "completed")] },
    ]);
  });

  it("CRLF, CR, indentation and blank lines are fine", () => {
    expect(parsed("\r\n  # Build  \r\n\t- [x] Design\r  * [/]   Write tests   \n\n\n    + [-] Benchmark\n\n# Release\r\n- [ ] Ship\r\n")).toEqual(sample);
  });

  it("text after the marker is kept as written, brackets, hashes and comments included", () => {
    expect(parsed("# C# ##\n- [ ] [x] not a marker # <!-- note -->\n- [x] \\[ok\\]")).toEqual([
      { name: "C# ##", tasks: [task("[x] not a marker # <!-- note -->"), task("\\[ok\\]", "completed")] },
    ]);
  });

  it("keeps unicode; a Unicode line separator inside a line is cleaned to a space, as the tool cleans text", () => {
    expect(parsed("# Été 😀\n- [ ] a\u2028b\u00a0c\u0085d")).toEqual([{ name: "Été 😀", tasks: [task("a b\u00a0c d")] }]);
  });

  it("does not normalise: statuses stay as written", () => {
    expect(parsed("- [/] a\n- [/] b\n- [ ] c")[0]!.tasks.map((t) => t.status)).toEqual(["in_progress", "in_progress", "pending"]);
  });

  it("a document with no heading and no task is the empty plan; headings with no tasks parse as empty phases", () => {
    for (const text of ["", "\n\n", "  \n"]) expect(parsed(text)).toEqual([]);
    expect(parsed("# Todos")).toEqual([{ name: "Todos", tasks: [] }]);
    expect(parsed("# A\n## B")).toEqual([
      { name: "A", tasks: [] },
      { name: "B", tasks: [] },
    ]);
  });

  it("keeps an empty phase when other phases have tasks", () => {
    expect(parsed("# A\n# B\n- [ ] x")).toEqual([
      { name: "A", tasks: [] },
      { name: "B", tasks: [task("x")] },
    ]);
  });
});

describe("phases markdown: errors name the line", () => {
  it.each([
    ["a paragraph", "# P\nJust some words", ['Line 2: expected a "# phase" heading or a "- [ ] task" line']],
    ["a numbered list", "1. [ ] task", ['Line 1: expected a "# phase" heading or a "- [ ] task" line']],
    ["seven hashes", "####### P", ['Line 1: expected a "# phase" heading or a "- [ ] task" line']],
    ["a heading without a space", "#Build", ['Line 1: expected a "# phase" heading or a "- [ ] task" line']],
    ["a bullet without a marker", "- task", ['Line 1: a task needs a status marker, like "- [ ] task"']],
    ["a marker glued to the text", "- [x]task", ['Line 1: a task needs a status marker, like "- [ ] task"']],
    ["an unknown marker", "- [?] task", ['Line 1: unknown status marker "[?]"; use [ ], [/], [x] or [-]']],
    ["a wide marker", "- [ x ] task", ['Line 1: unknown status marker "[ x ]"; use [ ], [/], [x] or [-]']],
    ["a marker that names an Object method", "- [toString] task", ['Line 1: unknown status marker "[toString]"; use [ ], [/], [x] or [-]']],
    ["a task with no text", "- [ ]   ", ["Line 1: a task needs text"]],
    ["a heading with no name", "#\n- [ ] a", ["Line 1: a heading needs a phase name"]],
    ["a duplicate phase", "# A\n- [ ] a\n# A\n- [ ] b", ['Line 3: duplicate phase "A"']],
    ["the implicit Todos phase named again", "- [ ] a\n# Todos", ['Line 2: duplicate phase "Todos"']],
    ["a duplicate task across phases", "# A\n- [ ] a\n# B\n- [x]  a ", ['Line 4: duplicate task "a"']],
    ["a task over 1024 bytes", `- [ ] ${"é".repeat(512)}x`, ["Line 1: task is longer than 1024 bytes"]],
    ["a phase name over 128 bytes", `# ${"p".repeat(129)}\n- [ ] a`, ["Line 1: phase name is longer than 128 bytes"]],
  ])("%s", (_name, text, errors) => {
    expect(parsePhasesMarkdown(text).errors).toEqual(errors);
  });

  it("limits: 1024-byte tasks and 128-byte names are fine", () => {
    expect(parsed(`# ${"p".repeat(128)}\n- [ ] ${"é".repeat(512)}`)[0]!.tasks).toHaveLength(1);
  });

  it("more than 100 tasks or 100 phases is an error at the first one too many", () => {
    const tasks = Array.from({ length: 101 }, (_, i) => `- [ ] t${i}`).join("\n");
    expect(parsePhasesMarkdown(tasks).errors).toEqual(["Line 101: more than 100 tasks"]);
    const phases = Array.from({ length: 101 }, (_, i) => `# P${i}\n- [ ] t${i}`).join("\n");
    expect(parsePhasesMarkdown(phases).errors).toEqual(["Line 201: more than 100 phases", "Line 202: more than 100 tasks"]);
  });

  it("every bad line is reported, in order", () => {
    expect(parsePhasesMarkdown("# A\r\n- [?] x\r\nhello\r\n- [ ] ok\r\n- nope").errors).toEqual([
      'Line 2: unknown status marker "[?]"; use [ ], [/], [x] or [-]',
      'Line 3: expected a "# phase" heading or a "- [ ] task" line',
      'Line 5: a task needs a status marker, like "- [ ] task"',
    ]);
  });
});

const item = (id: string, content: string, status: TodoItem["status"] = "pending", priority: TodoItem["priority"] = "medium"): TodoItem => ({
  id,
  content,
  status,
  priority,
});

function parsedList(text: string) {
  const result = parseListMarkdown(text);
  expect(result.errors).toEqual([]);
  return result.items;
}

describe("list markdown: render", () => {
  it("one # Todos heading, markers for the four statuses, a non-default priority shown in words, no ids anywhere", () => {
    const items = [item("1", "Draft", "completed"), item("2", "Write", "in_progress", "high"), item("3", "Skip", "canceled", "low"), item("4", "Ship")];
    const text = renderListMarkdown(items);
    expect(text).toBe(["# Todos", "- [x] Draft", "- [/] Write (priority: high)", "- [-] Skip (priority: low)", "- [ ] Ship"].join("\n"));
    expect(text).not.toContain("<!--");
  });

  it("an empty list is the heading alone", () => {
    expect(renderListMarkdown([])).toBe("# Todos");
  });

  it("text that is not one clean line is shown cleaned", () => {
    expect(renderListMarkdown([item("a", "  two\nlines ")])).toBe("# Todos\n- [ ] two lines");
  });

  it("a medium item whose text ends like a priority says its own, so it reads back as medium", () => {
    const items = [item("1", "ask (priority: high)")];
    expect(renderListMarkdown(items)).toBe("# Todos\n- [ ] ask (priority: high) (priority: medium)");
    expect(parseListMarkdown(renderListMarkdown(items), items).items).toEqual(items);
  });
});

describe("list markdown: parse", () => {
  it("reads back what it renders against the plan it came from, exactly: ids, verbatim content, priorities", () => {
    const items = [item("1", '  <b>Ship</b> & "q" \n 😀 ', "completed", "high"), item(" id ", "x <!-- y --> z", "canceled"), item("<!--", "-->")];
    const back = parseListMarkdown(renderListMarkdown(items), items);
    expect(back.errors).toEqual([]);
    expect(back.items).toEqual(items);
  });

  it("matches lines to the plan by their text: reordered lines keep their ids, a new line gets a fresh one, same texts pair in order", () => {
    const current = [item("1", "a"), item("2", "b"), item("7", "same"), item("8", "same")];
    const back = parseListMarkdown("- [x] b\n- [ ] new\n- [ ] same\n- [/] same (priority: low)\n- [ ] a", current);
    expect(back.items).toEqual([item("2", "b", "completed"), item("3", "new"), item("7", "same"), item("8", "same", "in_progress", "low"), item("1", "a")]);
  });

  it("an edited line is a new item; the item it was is gone", () => {
    expect(parseListMarkdown("- [ ] a, changed", [item("1", "a")]).items).toEqual([item("2", "a, changed")]);
  });

  it("an old copy with data comments still keeps its ids and exact contents", () => {
    expect(parsedList('- [ ] two lines <!-- {"id":"a","content":"  two\\nlines "} -->\n- [x] b <!-- {"id":"9","priority":"low"} -->')).toEqual([
      item("a", "  two\nlines "),
      item("9", "b", "completed", "low"),
    ]);
  });

  it("says which headings a list did not keep", () => {
    expect(parseListMarkdown("# Todos\n- [ ] a\n# Research\n- [ ] b\n## Write\n- [ ] c").headings).toEqual(["Research", "Write"]);
  });

  it("maps markers to list statuses, aliases included", () => {
    const text = "- [ ] a\n- [/] b\n- [x] c\n- [-] d\n- [X] e\n- [>] f\n- [~] g\n- [] h\n- \\[x\\] i";
    expect(parsedList(text).map((i) => i.status)).toEqual([
      "pending",
      "in_progress",
      "completed",
      "canceled",
      "completed",
      "in_progress",
      "canceled",
      "pending",
      "completed",
    ]);
  });

  it("ignores headings: a phased plan becomes one list in order", () => {
    expect(parsedList("# A\n- [x] one\n## B\n- [ ] two").map((i) => i.content)).toEqual(["one", "two"]);
  });

  it("lines without data get the smallest unused numeric ids and default priority", () => {
    const text = '- [ ] a\n- [ ] b <!-- {"id":"2"} -->\n- [ ] c\n- [ ] d <!-- {"id":"1x"} -->';
    expect(parsedList(text)).toEqual([item("1", "a"), item("2", "b"), item("3", "c"), item("1x", "d")]);
  });

  it("edited visible text wins over the content in the comment", () => {
    expect(parsedList('- [ ] new text <!-- {"id":"a","content":"  old\\ntext "} -->')).toEqual([item("a", "new text")]);
  });

  it("a trailing comment that is not a JSON object is part of the text", () => {
    expect(parsedList("- [ ] a <!-- note -->\n- [ ] b <!-- [1] -->")).toEqual([item("1", "a <!-- note -->"), item("2", "b <!-- [1] -->")]);
  });

  it("CRLF and indentation are fine", () => {
    expect(parsedList('# Todos\r\n   - [x] a <!-- {"id":"9","priority":"low"} -->  \r\n')).toEqual([item("9", "a", "completed", "low")]);
  });
});

describe("list markdown: errors name the line", () => {
  it.each([
    ["a paragraph", "hello", ['Line 1: expected a "# phase" heading or a "- [ ] task" line']],
    ["an unknown marker", "- [?] x", ['Line 1: unknown status marker "[?]"; use [ ], [/], [x] or [-]']],
    ["no marker", "- x", ['Line 1: a task needs a status marker, like "- [ ] task"']],
    ["no text", '- [ ] <!-- {"id":"1"} -->', ["Line 1: a task needs text"]],
    ["a duplicate id", '- [ ] a <!-- {"id":"1"} -->\n- [ ] b <!-- {"id":"1"} -->', ['Line 2: duplicate id "1"']],
    ["a blank id", '- [ ] a <!-- {"id":" "} -->', ["Line 1: todo id must contain 1-128 bytes of nonblank text"]],
    ["an id that is not a string", '- [ ] a <!-- {"id":1} -->', ["Line 1: todo id must contain 1-128 bytes of nonblank text"]],
    ["a long id", `- [ ] a <!-- {"id":"${"i".repeat(129)}"} -->`, ["Line 1: todo id must contain 1-128 bytes of nonblank text"]],
    ["a bad priority", '- [ ] a <!-- {"id":"1","priority":"urgent"} -->', ["Line 1: invalid todo priority"]],
    ["an unknown data field", '- [ ] a <!-- {"id":"1","done":true} -->', ['Line 1: unknown field "done" in the item data']],
    ["content that is not a string", '- [ ] a <!-- {"content":3} -->', ["Line 1: item content must be a string"]],
    ["a task over 1024 bytes", `- [ ] ${"y".repeat(1025)}`, ["Line 1: task is longer than 1024 bytes"]],
  ])("%s", (_name, text, errors) => {
    expect(parseListMarkdown(text).errors).toEqual(errors);
  });

  it("more than 100 todos", () => {
    const text = Array.from({ length: 101 }, (_, i) => `- [ ] t${i}`).join("\n");
    expect(parseListMarkdown(text).errors).toEqual(["Line 101: more than 100 todos"]);
  });
});

describe("list as phases", () => {
  it("is one phase Todos with canceled shown as abandoned, or [] when empty", () => {
    expect(listAsPhases([])).toEqual([]);
    expect(listAsPhases([item("1", "a", "completed", "high"), item("2", "b", "canceled"), item("3", "c", "in_progress")])).toEqual([
      { name: "Todos", tasks: [task("a", "completed"), task("b", "abandoned"), task("c", "in_progress")] },
    ]);
  });

  it("renders as phases Markdown like the list renders", () => {
    const items = [item("1", "a", "completed"), item("2", "b")];
    expect(renderPhasesMarkdown(listAsPhases(items))).toBe(renderListMarkdown(items));
  });
});
