import { COUNTRY_CODES } from "../../server/lib/countries";
import { countryName } from "../lib/format";

let sorted: { code: string; name: string }[] | null = null;
const countries = () => (sorted ??= [...COUNTRY_CODES].map((code) => ({ code, name: countryName(code) })).sort((a, b) => a.name.localeCompare(b.name)));

/** Country picker over ISO 3166-1 alpha-2 codes, by name. */
export function CountrySelect(props: React.SelectHTMLAttributes<HTMLSelectElement>) {
  return (
    <select className="input" {...props}>
      <option value="">Choose a country</option>
      {countries().map((c) => (
        <option key={c.code} value={c.code}>
          {c.name} ({c.code})
        </option>
      ))}
    </select>
  );
}
