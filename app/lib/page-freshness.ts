/**
 * Response header by which the public linktree page's route tells the redirect host how long its
 * rendered page holds (ms epoch: the next scheduled item's edge). The redirect host keeps the page
 * until then and never passes the header on to the visitor.
 */
export const PAGE_FRESH_UNTIL_HEADER = "x-page-fresh-until";
