// One sentence per public error code, for people: the dashboard's forms and the command line say
// these where the API answers only the code.

/** What each public error code means to a person. */
export const ERROR_MESSAGES: Record<string, string> = {
  VALIDATION_FAILED: "Some fields need attention.",
  INVALID_TAG: "A tag is not valid: 1-24 characters of a-z, 0-9 and -, at most 10 tags.",
  INVALID_LINK_ID: "That slug is not valid: 1-50 characters of a-z, 0-9 and -.",
  EXPIRES_AT_IN_THE_PAST: "The expiry must be in the future.",
  EXPIRATION_URL_WITHOUT_EXPIRY: "A fallback URL needs an expiry date.",
  TOO_MANY_RULES: "At most 50 countries can be targeted.",
  NOT_A_SHORT_LINK: "That is not a short link of this service.",
  INVALID_CODE: "That code is wrong or has expired. Request a new one if needed.",
  UNAUTHORIZED: "Please sign in again.",
  SESSION_REQUIRED: "This needs a real sign-in.",
  FORBIDDEN: "You are not allowed to do that.",
  NOT_FOUND: "Not found. It may have been deleted.",
  LINK_ID_ALREADY_IN_USE: "That slug is already taken.",
  LINKTREE_LINK_NOT_EDITABLE: "This link belongs to a linktree; edit it in the linktree editor.",
  SLUG_ALREADY_IN_USE: "That slug is already taken.",
  DOMAIN_TAKEN: "That domain is already added here, or verified by another workspace.",
  DOMAIN_LIMIT: "This workspace has 20 unverified domains: verify or remove some first (unverified ones lapse after 7 days).",
  DOMAIN_IN_USE: "Links still use this domain: delete them or move them to another domain first.",
  TOKEN_LIMIT_REACHED: "The free plan allows one live token. Revoke your current token to create a new one.",
  LAST_OWNER: "A workspace needs an owner: make another member an owner first, or delete the workspace.",
  PERSONAL_WORKSPACE: "Your personal workspace is yours alone: it cannot be shared or deleted. Create a new workspace to work with others.",
  ALREADY_MEMBER: "That person is already a member of this workspace.",
  INVITE_EMAIL_MISMATCH: "This invitation was sent to another e-mail address. Sign in with that address to accept it.",
  PAYLOAD_TOO_LARGE: "That is too large.",
  INSUFFICIENT_STORAGE: "The server has no room for this file right now. Try again later.",
  PASSWORD_NOT_EXPORTABLE: "The link had a visit password, which no export carries, so it was not imported (it would have become public).",
  RATE_LIMITED: "Too many attempts. Please wait a moment and try again.",
  SLUGS_EXHAUSTED: "No short slugs are free right now; choose a custom slug.",
  SERVICE_UNAVAILABLE: "The service is briefly unavailable. Try again shortly.",
  INTERNAL_ERROR: "Something went wrong on our side. Try again.",
};

export const messageFor = (code: string) => ERROR_MESSAGES[code] ?? "Something went wrong.";
