import { byId } from "./dom.js";

/**
 * Asks for the gateway's token in a modal dialog; resolves with what the
 * person typed. `wrong`: the last token was refused, and the dialog says so.
 */
export function askToken(wrong: boolean): Promise<string> {
  const dialog = byId("token-dialog", HTMLDialogElement);
  const form = byId("token-form", HTMLFormElement);
  const input = byId("token", HTMLInputElement);
  byId("token-error", HTMLParagraphElement).hidden = !wrong;
  input.value = "";
  return new Promise((resolve) => {
    const submitted = (event: SubmitEvent) => {
      event.preventDefault();
      const token = input.value.trim();
      if (token === "") return;
      form.removeEventListener("submit", submitted);
      dialog.close();
      resolve(token);
    };
    form.addEventListener("submit", submitted);
    // Escape would close it with nothing to show; the page needs the token to go on.
    dialog.addEventListener("cancel", (event) => event.preventDefault(), { once: true });
    if (!dialog.open) dialog.showModal();
    input.focus();
  });
}
