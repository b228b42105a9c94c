// Server-only door to the avatar store (sharp must never reach the browser bundle).
export { AVATAR_MAX_BYTES, AVATAR_NAME_RE, avatarPath, storeAvatar } from "../../server/lib/avatars";
