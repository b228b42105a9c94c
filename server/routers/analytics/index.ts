// What other resources may use of analytics. Their files import analytics only through here.
export { msQuery } from "./analytics.schema";
export { countClicks } from "./analytics.service";
