import { escapeHtml, page } from "./html";

export type FormState = "ask" | "wrong" | "empty" | "limited";

const MESSAGES: Record<Exclude<FormState, "ask">, string> = {
  wrong: "Wrong password. Please try again.",
  empty: "Please enter the password.",
  limited: "Too many wrong attempts. Please wait and try again later.",
};

/**
 * The password form: plain HTML, works without JavaScript, labelled input, errors announced
 * (role=alert) and tied to the input with aria-describedby.
 */
export function passwordFormPage(slug: string, state: FormState = "ask"): string {
  const message = state === "ask" ? "" : `<p class="error" id="password-error" role="alert">${escapeHtml(MESSAGES[state])}</p>`;
  const describedBy = message ? ' aria-describedby="password-error" aria-invalid="true"' : "";
  return page(
    "Password required",
    `<h1>This link is password protected</h1>` +
      `<form method="post" action="/${escapeHtml(encodeURIComponent(slug))}">` +
      `<label for="password">Password</label>` +
      `<input id="password" name="password" type="password" required autocomplete="current-password" autofocus${describedBy}>` +
      message +
      `<button type="submit">Continue</button>` +
      `</form>`,
  );
}
