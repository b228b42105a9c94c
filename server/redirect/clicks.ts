/** A counted visit, as stored (ClickEvent plus `rule`). */
export type ClickRecord = {
  linkId: string;
  workspaceId: string;
  ts: string;
  timestamp: number;
  country: string | null;
  region: string | null;
  regionName: string | null;
  city: string | null;
  timezone: string | null;
  lat: number | null;
  lng: number | null;
  device: "mobile" | "tablet" | "smarttv" | "desktop";
  platform: string | null;
  browser: string | null;
  referer: string | null;
  rule: "ios" | "android" | "geo" | "url" | "expiration_url" | "expired_404";
};

export type ClickRecorder = {
  record(click: ClickRecord): void;
  /** Writes everything buffered; resolves when stored. */
  flush(): Promise<void>;
  close(): Promise<void>;
};
