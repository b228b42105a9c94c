// The click pipeline lives in click-pipeline/; this module keeps its public names where callers import them.
export {
  BatchClickRecorder,
  enrichVisit,
  logSafeError,
  startClickRecorder,
  type ClickRecord,
  type ClickRecorder,
  type RecorderDeps,
  type RecorderOptions,
  type Rule,
  type Visit,
} from "./click-pipeline";
