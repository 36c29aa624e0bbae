import { ApiError, type Api, errorOf } from "./api.js";
import { h } from "./dom.js";

/** A code waiting, as `GET /v1/pairing` lists it. */
interface Pending {
  code: string;
  channel: string;
  user_id: string;
  user_name?: string;
  expires_at: string;
}

/** A user let in. */
interface Paired {
  channel: string;
  user_id: string;
  user_name?: string;
  approved_at: string;
}

/** How often the page looks for new codes while it is open (a person wrote to the bot meanwhile). */
const POLL_MS = 20_000;

const who = (user: { user_id: string; user_name?: string }) => (user.user_name ? `${user.user_name} (${user.user_id})` : user.user_id);
const time = (iso: string) => new Date(iso).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });

/**
 * People who asked to talk to a chat channel's bot (`dm_policy:
 * "pairing"`): each waiting code with its channel, user and expiry, with
 * Approve and Deny, and the users let in, with Revoke (`GET /v1/pairing`,
 * `POST /v1/pairing/<code>/approve|deny`, `DELETE
 * /v1/pairing/users/<channel>/<id>`). The bar's "Access" button shows how
 * many wait; it shows once someone asked (a code waits or a user was let
 * in), and a gateway without pairing routes (404) never shows it.
 */
export function mountPairingPanel(api: Api, opener: HTMLButtonElement, badge: HTMLElement): void {
  const pendingList = h("ul", { class: "tool-list pairing-list", attrs: { "aria-label": "Waiting to be let in" } });
  const pairedList = h("ul", { class: "tool-list pairing-list", attrs: { "aria-label": "Let in" } });
  const status = h("p", { class: "note", attrs: { role: "status" } });
  const close = h("button", { class: "quiet tools-close", text: "Close", attrs: { type: "button" } });
  const dialog = h(
    "dialog",
    { class: "tools-dialog pairing-dialog", attrs: { id: "pairing-dialog", "aria-labelledby": "pairing-heading" } },
    h(
      "div",
      { class: "tools-body" },
      h("div", { class: "tools-head" }, h("h2", { text: "Access", attrs: { id: "pairing-heading" } }), close),
      h("p", {
        class: "note",
        text: 'People who wrote to a channel with dm_policy "pairing" got a code; approve it here or with picoclaw pairing approve <CODE>. Codes expire; a person gets a new one by writing again.',
      }),
      status,
      h("h3", { text: "Waiting" }),
      pendingList,
      h("h3", { text: "Let in" }),
      pairedList,
    ),
  );
  document.body.append(dialog);

  const act = async (path: string, method: string, done: string): Promise<void> => {
    status.textContent = "…";
    try {
      const res = await api.fetch(path, { method, ...(method === "POST" ? { headers: { "content-type": "application/json" }, body: "{}" } : {}) });
      if (!res.ok) throw await errorOf(res);
      status.textContent = done;
    } catch (error) {
      status.textContent = `Not changed: ${error instanceof Error ? error.message : String(error)}`;
    }
    await load();
  };

  const pendingRow = (p: Pending) => {
    const approve = h("button", { text: "Approve", attrs: { type: "button" } });
    const deny = h("button", { class: "danger", text: "Deny", attrs: { type: "button" } });
    approve.addEventListener("click", () => void act(`v1/pairing/${encodeURIComponent(p.code)}/approve`, "POST", `${who(p)} is in on ${p.channel}.`));
    deny.addEventListener("click", () => void act(`v1/pairing/${encodeURIComponent(p.code)}/deny`, "POST", `Code ${p.code} denied.`));
    return h(
      "li",
      { class: "tool pairing", attrs: { "data-code": p.code } },
      h("div", { class: "tool-top" }, h("span", { class: "tool-name", text: who(p) }), h("code", { text: p.code })),
      h("p", { class: "tool-line", text: `${p.channel} · until ${time(p.expires_at)}` }),
      h("div", { class: "row" }, approve, deny),
    );
  };

  const pairedRow = (u: Paired) => {
    const revoke = h("button", { class: "quiet", text: "Revoke", attrs: { type: "button" } });
    revoke.addEventListener(
      "click",
      () => void act(`v1/pairing/users/${encodeURIComponent(u.channel)}/${encodeURIComponent(u.user_id)}`, "DELETE", `${who(u)} is out of ${u.channel}.`),
    );
    return h(
      "li",
      { class: "tool pairing", attrs: { "data-user": u.user_id } },
      h("div", { class: "tool-top" }, h("span", { class: "tool-name", text: who(u) }), revoke),
      h("p", { class: "tool-line", text: `${u.channel} · since ${new Date(u.approved_at).toLocaleString()}` }),
    );
  };

  async function load(): Promise<void> {
    let body: { pending: Pending[]; paired: Paired[] };
    try {
      body = await api.json("v1/pairing");
    } catch (error) {
      // A gateway without pairing: no button.
      if (error instanceof ApiError && error.status === 404) opener.hidden = true;
      return;
    }
    // Shown once someone asked: a gateway whose channels pair nobody has nothing to show here.
    opener.hidden = body.pending.length === 0 && body.paired.length === 0;
    badge.textContent = body.pending.length > 0 ? String(body.pending.length) : "";
    pendingList.replaceChildren(...(body.pending.length ? body.pending.map(pendingRow) : [h("li", { class: "note", text: "Nobody is waiting." })]));
    pairedList.replaceChildren(...(body.paired.length ? body.paired.map(pairedRow) : [h("li", { class: "note", text: "Nobody was let in by a code yet." })]));
  }

  opener.addEventListener("click", () => {
    status.textContent = "";
    dialog.showModal();
    void load();
  });
  close.addEventListener("click", () => dialog.close());
  dialog.addEventListener("click", (event) => {
    if (event.target === dialog) dialog.close();
  });
  void load();
  setInterval(() => {
    if (document.visibilityState === "visible") void load();
  }, POLL_MS);
}
