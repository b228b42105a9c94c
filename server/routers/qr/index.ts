// What other resources may use of qr. Their files import qr only through here.
export { qrTarget } from "./qr.service";

/**
 * Procedures whose REST answer is the file itself, with its content types: they return
 * `{content_type, base64}` and the REST adapter writes the decoded bytes (trpc-openapi writes JSON only).
 */
export const BINARY_ANSWERS: Record<string, readonly string[]> = { "qr.get": ["image/svg+xml", "image/png"] };
