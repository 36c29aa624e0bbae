/** Something the chat user sees: non-silent tool output, a command reply, the final reply. */
export interface Delivery {
  from: string;
  text: string;
}

/**
 * What reaches a session outside a request/response pair: a delivery (the
 * deliveries of its turns as they happen, background ones too) or a
 * feature's notice (an event name and its JSON data).
 */
export type SessionItem = ({ type: "delivery" } & Delivery) | { type: "notice"; event: string; data: Readonly<Record<string, unknown>> };
