// What other resources may use of health. Their files import health only through here.
export { healthIs } from "./health-filter";
