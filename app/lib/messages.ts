export { ERROR_MESSAGES, messageFor } from "../../server/domain/error-messages";

/** The shape every action answers with when it fails: the API's `{error, fields}` plus a sentence. */
export type FormError = { error: string; message: string; fields: Record<string, string[]> };
