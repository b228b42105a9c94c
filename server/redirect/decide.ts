// The decision itself is pure and lives on the ground floor; the redirect host imports it from here.
export {
  decide,
  forwardQuery,
  hasCard,
  isExpired,
  needsCountry,
  needsVariantPoint,
  pickVariant,
  type Answer,
  type LinkSnapshot,
  type Rule,
  type VisitorFacts,
} from "../domain/redirect-decision";
