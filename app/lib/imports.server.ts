// Server-only door to the CSV import and export (node:fs and the database never reach the browser bundle).
export { IMPORT_MAX_BYTES } from "../../server/routers/imports/csv-file";
export { exportLinksCsv } from "../../server/routers/imports/export";
export { FORMAT_LABELS, IMPORT_FORMATS, MAPPING_FIELDS } from "../../server/routers/imports/formats";
export { stageUpload } from "../../server/routers/imports/imports.service";
export { csvText } from "../../server/lib/csv";
