import { useMemo } from "react";
import { COUNTRY_CODES } from "../../server/domain/countries";
import { countryName } from "../lib/format";
import { useHydrated } from "../lib/hydrated";

const CODES = [...COUNTRY_CODES].sort();

/** Country picker over ISO 3166-1 alpha-2 codes; names (and order by name) once hydrated. */
export function CountrySelect(props: React.SelectHTMLAttributes<HTMLSelectElement>) {
  const hydrated = useHydrated();
  const options = useMemo(
    () =>
      hydrated
        ? CODES.map((code) => ({ code, name: `${countryName(code)} (${code})` })).sort((a, b) => a.name.localeCompare(b.name))
        : CODES.map((code) => ({ code, name: code })),
    [hydrated],
  );
  return (
    <select className="input" {...props}>
      <option value="">Choose a country</option>
      {options.map((c) => (
        <option key={c.code} value={c.code}>
          {c.name}
        </option>
      ))}
    </select>
  );
}
