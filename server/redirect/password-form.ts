import { escapeHtml, page } from "./html";

export type FormState = "ask" | "wrong" | "empty" | "limited";

const MESSAGES: Record<Exclude<FormState, "ask">, string> = {
  wrong: "Wrong password. Please try again.",
  empty: "Please enter the password.",
  limited: "Too many wrong attempts.",
};

/** "in 14 minutes", "in 40 seconds": how long a visitor held back by the limits waits. */
export function waitText(seconds: number): string {
  if (seconds < 60) return `in ${seconds} second${seconds === 1 ? "" : "s"}`;
  const minutes = Math.ceil(seconds / 60);
  return `in ${minutes} minute${minutes === 1 ? "" : "s"}`;
}

/**
 * The password form: plain HTML, works without JavaScript, labelled input, errors announced
 * (role=alert) and tied to the input with aria-describedby.
 */
export function passwordFormPage(slug: string, state: FormState = "ask", retryAfterSeconds?: number, query = ""): string {
  // A visitor held back is told when to try again, not just "later".
  const text =
    state === "limited" && retryAfterSeconds ? `${MESSAGES.limited} Please try again ${waitText(retryAfterSeconds)}.` : state === "ask" ? "" : MESSAGES[state];
  const message = state === "ask" ? "" : `<p class="error" id="password-error" role="alert">${escapeHtml(text)}</p>`;
  const describedBy = message ? ' aria-describedby="password-error" aria-invalid="true"' : "";
  return page(
    "Password required",
    `<h1>This link is password protected</h1>` +
      // The visit's query goes along: a QR code's marker and forwarded parameters survive the form.
      `<form method="post" action="/${escapeHtml(encodeURIComponent(slug))}${query ? escapeHtml(`?${query}`) : ""}">` +
      `<label for="password">Password</label>` +
      `<input id="password" name="password" type="password" required autocomplete="current-password" autofocus${describedBy}>` +
      message +
      `<button type="submit">Continue</button>` +
      `</form>`,
  );
}
