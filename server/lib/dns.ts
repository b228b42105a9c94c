import { Resolver } from "node:dns/promises";

/** How long one verification may wait for DNS, in all (each try gets a part of it). */
export const DNS_TIMEOUT_MS = 4_000;

export type TxtLookup = { records: string[]; error?: string };

/**
 * The TXT records at `name`, each record's strings joined (a long value is split into 255-byte
 * strings). Through `servers` (`host:port`, DNS_SERVERS) or the system resolver. No record, no such
 * name, a timeout or an unreachable server: no records, and `error` says which (never a throw).
 */
export async function lookupTxt(name: string, opts: { servers?: readonly string[]; timeoutMs?: number } = {}): Promise<TxtLookup> {
  const timeoutMs = opts.timeoutMs ?? DNS_TIMEOUT_MS;
  const tries = 2;
  const resolver = new Resolver({ timeout: Math.max(100, Math.floor(timeoutMs / (tries + 1))), tries });
  if (opts.servers?.length) resolver.setServers([...opts.servers]);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      resolver.cancel();
      reject(Object.assign(new Error("DNS lookup timed out"), { code: "ETIMEOUT" }));
    }, timeoutMs);
  });
  try {
    const records = await Promise.race([resolver.resolveTxt(name), deadline]);
    return { records: records.map((chunks) => chunks.join("")) };
  } catch (e) {
    const code = (e as { code?: string }).code ?? "ERROR";
    return { records: [], error: code };
  } finally {
    clearTimeout(timer);
  }
}
