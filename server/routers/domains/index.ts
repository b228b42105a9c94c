// What other resources may use of domains. Their files import domains only through here.
export { domainIssue, domainNames, usableDomain } from "./domains.service";
