import dns2 from "dns2";

const { Packet } = dns2;

export type TestDnsServer = {
  /** `127.0.0.1:<port>`, for DNS_SERVERS. */
  address: string;
  /** TXT records served, by lower-case name; change them at any time. */
  txt: Map<string, string[]>;
  /** Questions received, as `<TYPE> <name>`. */
  asked: string[];
  close(): Promise<void>;
};

/**
 * A real DNS server on a free UDP port of 127.0.0.1 (dns2): answers TXT questions from `txt`, and
 * NXDOMAIN-free empty answers (NODATA) for every other name. `silent` never answers at all, as an
 * unreachable or firewalled server (the resolver times out).
 */
export async function startDnsServer(opts: { txt?: Record<string, string[]>; silent?: boolean } = {}): Promise<TestDnsServer> {
  const txt = new Map(Object.entries(opts.txt ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  const asked: string[] = [];
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const [question] = request.questions;
      asked.push(`${question?.type === Packet.TYPE.TXT ? "TXT" : String(question?.type)} ${question?.name}`);
      if (opts.silent) return;
      const response = Packet.createResponseFromRequest(request);
      if (question && question.type === Packet.TYPE.TXT) {
        for (const value of txt.get(question.name.toLowerCase()) ?? []) {
          // A long value goes out as several strings of at most 255 bytes, as DNS stores it. (dns2 encodes plain objects; its type wants a class.)
          const record = { name: question.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 60, data: value.match(/[^]{1,255}/g) ?? [""] };
          response.answers.push(record as unknown as (typeof response.answers)[number]);
        }
      }
      send(response);
    },
  });
  const addresses = await server.listen({ udp: { port: 0, address: "127.0.0.1" } });
  const port = (addresses as { udp?: { port: number } }).udp!.port;
  return {
    address: `127.0.0.1:${port}`,
    txt,
    asked,
    close: () => server.close(),
  };
}
