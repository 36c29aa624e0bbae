import { Api, ApiError } from "./api.js";
import { AskCards } from "./asks.js";
import { Conversation } from "./conversation.js";
import { byId } from "./dom.js";
import { Follower } from "./follow.js";
import { mountPairingPanel } from "./pairing-panel.js";
import { PlanPanel } from "./plan.js";
import { CHAT_ID, httpKey, newChatId, parseKey } from "./session-key.js";
import { SessionList } from "./sessions.js";
import { SubagentList } from "./subagents.js";
import { askToken } from "./token.js";
import { mountToolsPanel } from "./tools-panel.js";
import { Transcript } from "./transcript.js";
import { type AgentEntry, welcomeCard } from "./welcome.js";

const message = byId("message", HTMLTextAreaElement);
const send = byId("send", HTMLButtonElement);
const stop = byId("stop", HTMLButtonElement);
const agentSelect = byId("agent", HTMLSelectElement);
const statusLine = byId("status", HTMLSpanElement);
const sessionTitle = byId("session-title", HTMLSpanElement);
const readonlyNote = byId("readonly-note", HTMLParagraphElement);

const api = new Api(askToken);
const transcriptList = byId("transcript", HTMLOListElement);
const transcript = new Transcript(transcriptList);
const follower = new Follower(transcriptList, byId("new-messages", HTMLButtonElement));
const banner = byId("banner", HTMLDivElement);
const bannerText = byId("banner-text", HTMLSpanElement);
/** Counts down to the next try while the gateway is unreachable. */
let bannerTimer: ReturnType<typeof setInterval> | undefined;
let conversation: Conversation;
const plan = new PlanPanel(
  {
    root: byId("plan", HTMLDivElement),
    empty: byId("plan-empty", HTMLParagraphElement),
    stale: byId("plan-stale", HTMLParagraphElement),
    count: byId("plan-count", HTMLSpanElement),
    editor: byId("plan-editor", HTMLDetailsElement),
    markdown: byId("plan-markdown", HTMLTextAreaElement),
    save: byId("plan-save", HTMLButtonElement),
    result: byId("plan-result", HTMLPreElement),
  },
  (text) => conversation.command(text),
);
const subagentStop = byId("subagents-stop", HTMLButtonElement);
const subagents = new SubagentList(byId("subagent-list", HTMLUListElement), byId("subagents-empty", HTMLParagraphElement), subagentStop);
// A switched tool changes what the agents are offered: their list is read again, and the open session's plan column and first screen follow.
const toolsPanel = mountToolsPanel(api, byId("open-tools", HTMLButtonElement), () => void agentsChanged());
mountPairingPanel(api, byId("open-pairing", HTMLButtonElement), byId("pairing-count", HTMLSpanElement));
const sessions = new SessionList(api, byId("session-list", HTMLUListElement), byId("sessions-note", HTMLParagraphElement), (key) => void openSession(key));

/** Whether the page's own message runs, and whether a question waits for its answer (the composer then takes it). */
const composer = { busy: false, question: false };
const updateComposer = () => {
  send.disabled = composer.busy && !composer.question;
  stop.hidden = !composer.busy;
  document.body.classList.toggle("busy", composer.busy);
};
const asks = new AskCards(byId("asks", HTMLElement), {
  decide: (id, decision) => conversation.decide(id, decision),
  answer: (text) => void conversation.answer(text),
  questionWaiting: (waiting) => {
    composer.question = waiting;
    updateComposer();
  },
});

conversation = new Conversation({
  api,
  transcript,
  plan,
  subagents,
  asks,
  status: (text) => (statusLine.textContent = text),
  busy: (busy) => {
    composer.busy = busy;
    updateComposer();
  },
  turnEnded: () => void sessions.load().catch(() => {}),
  reachable: (reason, retryInMs) => showReachable(reason, retryInMs),
  welcome: () => {
    const agent = agents.find((entry) => entry.id === conversation.session?.agent);
    if (agent && message.disabled === false)
      transcript.showWelcome(
        welcomeCard(
          agent,
          (text) => sendNow(text),
          () => toolsPanel.open(),
        ),
      );
  },
});

/** The banner over the chat while the gateway cannot be reached, with when the page tries again; it goes by itself once it can. */
function showReachable(reason: string | undefined, retryInMs?: number): void {
  clearInterval(bannerTimer);
  bannerTimer = undefined;
  banner.hidden = reason === undefined;
  document.body.classList.toggle("offline", reason !== undefined);
  if (reason === undefined) return;
  const origin = location.origin;
  if (retryInMs === undefined) {
    bannerText.textContent = `${reason} It may be stopped, or this network cannot reach ${origin}. The page keeps trying.`;
    return;
  }
  const at = Date.now() + retryInMs;
  const tick = () => {
    const seconds = Math.max(0, Math.ceil((at - Date.now()) / 1000));
    bannerText.textContent = `${reason} It may be stopped, or this network cannot reach ${origin}. Trying again ${seconds > 0 ? `in ${seconds} s` : "now"}…`;
  };
  tick();
  bannerTimer = setInterval(tick, 1000);
}

/** Sends a text as the person's message (a first-screen example), unless a message is under way. */
function sendNow(text: string): void {
  if (conversation.isSending || message.disabled) return;
  follower.toEnd();
  void conversation.send(text);
}

let agents: AgentEntry[] = [];

function showError(error: unknown): void {
  transcript.error(error instanceof ApiError ? error.code : "error", error instanceof Error ? error.message : String(error));
}

/** Reads the agents again (after a tool switch): the open session's plan column, and its first screen when it shows one. */
async function agentsChanged(): Promise<void> {
  try {
    agents = (await api.json<{ agents: AgentEntry[] }>("v1/agents")).agents;
  } catch {
    return;
  }
  const session = conversation.session;
  if (!session) return;
  const tools = agents.find((agent) => agent.id === session.agent)?.tools;
  plan.setAvailable(tools === undefined || tools.includes("todo"));
  if (transcript.empty) conversation.showWelcome();
}

/** Opens a session by key: the URL's fragment keeps it across reloads. */
async function openSession(key: string): Promise<void> {
  const session = parseKey(key);
  if (!session) return;
  if (location.hash !== `#${key}`) history.replaceState(null, "", `#${key}`);
  agentSelect.value = session.agent;
  const tools = agents.find((agent) => agent.id === session.agent)?.tools;
  plan.setAvailable(tools === undefined || tools.includes("todo"));
  sessionTitle.textContent = session.channel === "http" ? session.chatId : `${session.channel}: ${session.chatId}`;
  sessions.select(key);
  // Only web sessions take messages from here; a chat app's conversation is watched, and answered there.
  const web = session.channel === "http";
  message.disabled = !web;
  readonlyNote.hidden = web;
  readonlyNote.textContent = web ? "" : `This conversation belongs to the ${session.channel} channel: it is shown here, and answered there.`;
  closeDrawers();
  try {
    await conversation.open(session);
  } catch (error) {
    showError(error);
  }
  if (web) message.focus();
}

/** The newest web session of an agent, or its `default` one. */
function sessionOf(agent: string): string {
  const listed = sessions.entries.find((entry) => entry.agent === agent && parseKey(entry.key)?.channel === "http");
  return listed?.key ?? httpKey(agent, "default");
}

function submit(): void {
  const text = message.value;
  if (text.trim() === "" || message.disabled) return;
  // While a question waits, what the person writes is its answer (the turn that asked is still running).
  if (asks.questionWaiting) {
    message.value = "";
    void conversation.answer(text);
    return;
  }
  if (conversation.isSending) return;
  message.value = "";
  // The person's own message brings the view to the end, wherever they were.
  follower.toEnd();
  void conversation.send(text);
}

message.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    submit();
  }
});
byId("composer", HTMLFormElement).addEventListener("submit", (event) => {
  event.preventDefault();
  submit();
});
stop.addEventListener("click", () => void conversation.stop());
subagentStop.addEventListener("click", () => void conversation.stop());
byId("clear", HTMLButtonElement).addEventListener("click", () => {
  if (!conversation.isSending) void conversation.send("/clear");
});
agentSelect.addEventListener("change", () => void openSession(sessionOf(agentSelect.value)));

const newSession = byId("new-session", HTMLFormElement);
const newSessionName = byId("new-session-name", HTMLInputElement);
const newSessionError = byId("new-session-error", HTMLParagraphElement);
newSession.addEventListener("submit", (event) => {
  event.preventDefault();
  const name = newSessionName.value.trim() || newChatId();
  newSessionError.hidden = CHAT_ID.test(name);
  if (!CHAT_ID.test(name)) {
    newSessionError.textContent = "A name is 1-128 letters, digits and . _ ~ @ + = -";
    return;
  }
  newSessionName.value = "";
  void openSession(httpKey(agentSelect.value, name));
});

// On a narrow screen the session list and the plan are drawers over the chat.
const drawers = [
  { button: byId("toggle-sessions", HTMLButtonElement), panel: byId("sessions", HTMLElement) },
  { button: byId("toggle-side", HTMLButtonElement), panel: byId("side", HTMLElement) },
];
function closeDrawers(): void {
  for (const drawer of drawers) {
    drawer.panel.classList.remove("open");
    drawer.button.setAttribute("aria-expanded", "false");
  }
}
for (const drawer of drawers) {
  drawer.button.addEventListener("click", () => {
    const opening = !drawer.panel.classList.contains("open");
    closeDrawers();
    drawer.panel.classList.toggle("open", opening);
    drawer.button.setAttribute("aria-expanded", String(opening));
  });
}
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape") closeDrawers();
});

async function start(): Promise<void> {
  statusLine.textContent = "connecting…";
  const body = await api.json<{ agents: AgentEntry[]; default?: string }>("v1/agents");
  agents = body.agents;
  agentSelect.replaceChildren(
    ...agents.map((agent) => {
      const option = document.createElement("option");
      option.value = agent.id;
      option.textContent = agent.name && agent.name !== agent.id ? `${agent.name} (${agent.id})` : agent.id;
      if (agent.description) option.title = agent.description;
      return option;
    }),
  );
  await sessions.load().catch(showError);
  const asked = keyInAddress();
  const fromUrl = asked === undefined ? undefined : parseKey(asked);
  const known = fromUrl && agents.some((agent) => agent.id === fromUrl.agent) ? fromUrl.key : undefined;
  const defaultAgent = body.default ?? agents.find((agent) => agent.id === "main")?.id ?? agents[0]?.id ?? "main";
  const newestWeb = sessions.entries.find((entry) => parseKey(entry.key)?.channel === "http")?.key;
  await openSession(known ?? newestWeb ?? httpKey(defaultAgent, "default"));
  // An address naming no session this gateway has (a typo, a bad escape, an agent gone): said, not silently replaced.
  if (asked !== undefined && asked !== "" && known === undefined) {
    transcript.remark(`The address named a session this page cannot open (${JSON.stringify(asked.slice(0, 80))}); this one is open instead.`);
  }
}

/** The session key after `#`, decoded; a malformed escape (`#%E0%A4%A`) is taken as written. Undefined without a `#`. */
function keyInAddress(): string | undefined {
  const raw = location.hash.slice(1);
  if (raw === "") return undefined;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** The first load: a gateway that cannot be reached is the banner, and the page tries again (doubling from 1 s to 30 s). */
async function startWhenReachable(wait = 1000): Promise<void> {
  try {
    await start();
    showReachable(undefined);
  } catch (error) {
    if (!(error instanceof TypeError)) return showError(error);
    statusLine.textContent = "offline";
    showReachable("The gateway is not answering.", wait);
    setTimeout(() => void startWhenReachable(Math.min(wait * 2, 30_000)), wait);
  }
}

void startWhenReachable();
