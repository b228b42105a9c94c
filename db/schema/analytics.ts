import { bigint, integer, pgTable, primaryKey, text } from "drizzle-orm/pg-core";

const ms = (name: string) => bigint(name, { mode: "number" });

// Summaries of the clicks of each workspace's short links (linktree pages left out, as the
// workspace's analytics leave them out), kept by the click storage in the clicks' transaction, so
// a breakdown over whole UTC days reads a few rows per day instead of every click. `country` is ''
// for an unknown country. Every table is keyed by UTC day (or hour), the unit retention drops.

/** Clicks per UTC hour and country. */
export const clickHourCountries = pgTable(
  "click_hour_countries",
  {
    workspaceId: text("workspace_id").notNull(),
    hour: ms("hour").notNull(),
    country: text("country").notNull(),
    clicks: integer("clicks").notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.hour, t.country] })],
);

/** Each visitor key of a UTC day (the day's number since 1970), with the day's hours it clicked in (bit h: hour h). */
export const clickVisitorDays = pgTable(
  "click_visitor_days",
  {
    workspaceId: text("workspace_id").notNull(),
    day: integer("day").notNull(),
    visitor: text("visitor").notNull(),
    hours: integer("hours").notNull(),
    /** `hours` before the last write, so the write that changed them knows what changed (see clickVisitorHours). */
    priorHours: integer("prior_hours").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.day, t.visitor] })],
);

/**
 * Each (country, visitor key) of a UTC day, with the day's hours it clicked in from there (bit h:
 * hour h): tells whether a click is a country's new visitor of the day, and which of a partial
 * day's visitors fall in a range.
 */
export const clickVisitorCountries = pgTable(
  "click_visitor_countries",
  {
    workspaceId: text("workspace_id").notNull(),
    day: integer("day").notNull(),
    country: text("country").notNull(),
    visitor: text("visitor").notNull(),
    hours: integer("hours").notNull().default(0),
    /** `hours` before the last write (see clickVisitorHours). */
    priorHours: integer("prior_hours").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.day, t.country, t.visitor] })],
);

/**
 * Distinct visitor keys per UTC day: of the whole workspace (`dim` 'total', `value` '') and per
 * country (`dim` 'country'). Visitors are counted per UTC day, so these add up over days.
 */
export const clickDayVisitors = pgTable(
  "click_day_visitors",
  {
    workspaceId: text("workspace_id").notNull(),
    day: integer("day").notNull(),
    dim: text("dim", { enum: ["total", "country"] }).notNull(),
    value: text("value").notNull(),
    visitors: integer("visitors").notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.day, t.dim, t.value] })],
);

/**
 * How many of a UTC day's visitor keys clicked first (`firsts`) and last (`lasts`) in each hour of
 * it (0-23), of the whole workspace (`dim` 'total', `value` '') and per country. The visitors of the
 * day's hours [0, h) are its firsts before h, those of [h, 24) its lasts from h on: a range, or a
 * local day, that cuts a UTC day in two reads a few of these rows instead of the day's visitor keys.
 * Kept from the hour masks of the two visitor tables: a write that moves a key's first or last hour
 * moves one count from the old hour to the new.
 */
export const clickVisitorHours = pgTable(
  "click_visitor_hours",
  {
    workspaceId: text("workspace_id").notNull(),
    day: integer("day").notNull(),
    dim: text("dim", { enum: ["total", "country"] }).notNull(),
    value: text("value").notNull(),
    hour: integer("hour").notNull(),
    firsts: integer("firsts").notNull(),
    lasts: integer("lasts").notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.day, t.dim, t.value, t.hour] })],
);

/**
 * Clicks per UTC day and value of each attribute the dashboard's analytics page ranks: `dim` is
 * `link`, `country`, `city`, `device`, `os`, `browser`, `referrer_domain`, `rule` or `trigger`,
 * `value` the click's value ('' for none), `detail` the country for `city` (so a city reads with its
 * country), else ''. Whole days of a ranking read these instead of every click.
 */
export const clickDayValues = pgTable(
  "click_day_values",
  {
    workspaceId: text("workspace_id").notNull(),
    day: integer("day").notNull(),
    dim: text("dim").notNull(),
    value: text("value").notNull(),
    detail: text("detail").notNull(),
    clicks: integer("clicks").notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.day, t.dim, t.value, t.detail] })],
);
