// What other resources may use of links. Their files import links only through here.
export { MAX_TAGS, SLUG_RE, createLinkInput, linkIdSchema, slugSchema, strictNumber, type CreateLinkInput, type LinkDto } from "./links.schema";
export { PUBLIC_WORKSPACE_ID, checkNoLoops, createdLinkEvents, findOwnLink, linkDtos, shortUrl } from "./links.service";
export { noLoopChecks } from "./runtime-checks";
export { expiredAt, liveLink, unexpiredAt, workspaceLinks } from "./link-status";
export { bulkWrite } from "./bulk-write";
// The link store: the only writer of `links` rows.
export {
  afterLinkCommit,
  deleteLinks,
  deleteWorkspaceLinks,
  inLinkTransaction,
  insertImportedLinks,
  insertLink,
  linkTx,
  nextUpdatedAt,
  softDeleteLink,
  updateLink,
  type ImportedLink,
  type LinkRow,
  type LinkTx,
} from "./link-store";
