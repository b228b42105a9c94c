import { useEffect, useState } from "react";
import { countryName } from "./format";

/** False during the server render and hydration, true after: for output that differs between ICU builds. */
export function useHydrated(): boolean {
  const [hydrated, setHydrated] = useState(false);
  useEffect(() => setHydrated(true), []);
  return hydrated;
}

/** Country names come from the runtime's ICU data, which differs between Node and the browser: codes until hydrated. */
export function useCountryName(): (code: string) => string {
  const hydrated = useHydrated();
  return (code) => (hydrated ? countryName(code) : code);
}
