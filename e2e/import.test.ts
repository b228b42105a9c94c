import { readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { launch, newPage, shot, signIn, startServer, USER_AGENT, type Server } from "./harness";

let server: Server;
let browser: Browser;
let ctx: BrowserContext;
let page: Page & { problems: string[] };
const ROWS = 20_000;

beforeAll(async () => {
  [server, browser] = await Promise.all([startServer(), launch()]);
  ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, userAgent: USER_AGENT, acceptDownloads: true });
  page = await newPage(ctx);
  await signIn(page, server, `import-${Date.now()}@example.com`);
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/**
 * A multipart POST of `size` bytes, streamed until the server answers (it refuses early and closes).
 * The server may close while we still write: on a busy machine the write can fail (EPIPE, reset)
 * before the answer is read, so such a try is repeated, and the headers go out a moment before the body.
 */
async function postLarge(url: string, size: number, headers: Record<string, string>): Promise<{ status: number; body: string; sent: number }> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await postLargeOnce(url, size, headers);
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (attempt >= 5 || (code !== "EPIPE" && code !== "ECONNRESET")) throw e;
    }
  }
}

function postLargeOnce(url: string, size: number, headers: Record<string, string>): Promise<{ status: number; body: string; sent: number }> {
  const boundary = "----importtest";
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.csv"\r\nContent-Type: text/csv\r\n\r\n`);
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = http.request(
      url,
      { method: "POST", headers: { ...headers, "content-type": `multipart/form-data; boundary=${boundary}`, "content-length": String(head.length + size) } },
      (res) => {
        answered = true;
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode!, body, sent }));
      },
    );
    req.on("error", (e) => (answered ? undefined : reject(e)));
    req.flushHeaders();
    // The refusal needs only the headers: give it a moment to arrive before the body starts.
    const start = () => {
      if (answered || req.destroyed) return;
      req.write(head);
      pump();
    };
    const block = Buffer.alloc(64 * 1024, "a");
    const pump = () => {
      while (!answered && !req.destroyed && sent < size) {
        sent += block.length;
        if (!req.write(block)) return void req.once("drain", pump);
      }
      if (!answered && !req.destroyed) req.end();
    };
    setTimeout(start, 200);
  });
}

/** A Shlink export (shlink-web-component's header row) of ROWS links, three of them broken. */
function shlinkExport(): string {
  const lines = ['"createdAt","domain","shortCode","shortUrl","longUrl","title","tags","visits"'];
  for (let i = 0; i < ROWS; i++) {
    const url = i === 10 ? "ftp://not-web" : i === 20 ? "" : `https://example.com/post/${i}`;
    const code = i === 30 ? "has space" : `Post${i}`;
    lines.push(`"2023-05-01T10:00:00+02:00","s.test","${code}","https://s.test/${code}","${url}","Post ${i}","blog|news",${i}`);
  }
  const file = path.join(server.dataDir, "short_urls.csv");
  writeFileSync(file, lines.join("\n") + "\n");
  return file;
}

it("a person imports a Shlink export: detected format, column mapping with a preview, a moving progress bar, the report of rejected rows", async () => {
  await page.goto(`${server.appUrl}/links`);
  await page.getByRole("link", { name: "Import" }).click();
  await page.waitForURL(/\/links\/import$/);
  await page.getByLabel("CSV file").setInputFiles(shlinkExport());
  await page.getByRole("button", { name: "Upload and preview" }).click();
  await page.getByTestId("detected-format").waitFor();
  expect(await page.getByTestId("detected-format").textContent()).toBe("Shlink export");
  // The preset maps Shlink's columns; the preview shows the first rows.
  expect(await page.getByLabel("Destination URL (required)").inputValue()).toBe("longUrl");
  expect(await page.getByLabel("Slug", { exact: true }).inputValue()).toBe("shortCode");
  expect(await page.getByLabel("Title", { exact: true }).inputValue()).toBe("title");
  const preview = page.getByRole("table", { name: "The first rows of the file" });
  expect(await preview.locator("tbody tr").count()).toBe(5);
  expect(await preview.locator("tbody tr").first().textContent()).toContain("https://example.com/post/0");
  // Not the titles after all.
  await page.getByLabel("The source's title goes to").selectOption("ignore");
  await shot(page, "import-mapping");
  await page.getByRole("button", { name: `Import ${ROWS.toLocaleString("en-US")} rows` }).click();
  await page.waitForURL(/\/links\/import\?job=[0-9a-z]{8}/);

  // The bar moves while rows go in (the page polls the job).
  const seen = new Set<number>();
  const bar = page.getByTestId("import-progress");
  const outcome = page.getByTestId("import-outcome");
  for (let i = 0; i < 600 && (await outcome.getAttribute("data-tone")) === "busy"; i++) {
    seen.add(Number(await bar.getAttribute("value")));
    await new Promise((r) => setTimeout(r, 100));
  }
  // Some rows were rejected: the heading and the bar say so (not a plain success).
  expect(await outcome.textContent()).toBe("Imported with problems: 3 rows rejected");
  expect(await bar.getAttribute("data-tone")).toBe("partial");
  const partial = [...seen].filter((v) => v > 0 && v < ROWS);
  expect(partial.length, `progress values seen: ${[...seen].join(", ")}`).toBeGreaterThanOrEqual(2);
  expect(await page.getByTestId("import-counts").textContent()).toBe(`20,000 of 20,000 rows (100%) · 19,997 created · 0 skipped · 3 rejected`);
  const rejected = page.getByRole("table", { name: "Rejected rows" });
  // Each rejected row with its slug and URL as the file gave them, the code and the reason.
  expect(await rejected.locator("tbody tr").allTextContents()).toEqual([
    "11post10ftp://not-webVALIDATION_FAILEDurl: must be an absolute http or https URL",
    "21post20VALIDATION_FAILEDurl: Required",
    "31has spacehttps://example.com/post/30INVALID_LINK_IDslug: must be 1-50 characters of 0-9, a-z and -",
  ]);
  await shot(page, "import-finished");
  const download = page.waitForEvent("download");
  await page.getByRole("link", { name: "Download the report (CSV)" }).click();
  const report = await (await download).path();
  const text = readFileSync(report!, "utf8");
  expect(text.trim().split("\r\n")).toEqual([
    "row,slug,url,error,reason,new_short_url",
    "11,post10,ftp://not-web,VALIDATION_FAILED,url: must be an absolute http or https URL,",
    "21,post20,,VALIDATION_FAILED,url: Required,",
    '31,has space,https://example.com/post/30,INVALID_LINK_ID,"slug: must be 1-50 characters of 0-9, a-z and -",',
  ]);

  // The imported links are there, slugs lower-cased, titles left out as mapped.
  await page.getByRole("link", { name: "See your links" }).click();
  await page.waitForURL(/\/links$/);
  expect(await page.getByTestId("link-row").first().textContent()).toMatch(/post\d+/);
  expect(page.problems).toEqual([]);
}, 180_000);

it("Export CSV downloads every link, and importing it back creates nothing", async () => {
  await page.goto(`${server.appUrl}/links`);
  const download = page.waitForEvent("download");
  await page.getByRole("link", { name: "Export CSV" }).click();
  const file = (await (await download).path())!;
  const lines = readFileSync(file, "utf8").trim().split("\r\n");
  expect(lines[0]).toBe(
    "id,slug,domain,short_url,url,title,tags,created_at,expires_at,expiration_url,targeting,og_title,og_description,og_image,clicks,has_password,forward_query,variants,archived",
  );
  expect(lines).toHaveLength(1 + 19_997);
  expect(lines.find((l) => l.includes(",post0,"))).toMatch(
    /^[0-9a-z]{8},post0,,http:\/\/127\.0\.0\.1:\d+\/post0,https:\/\/example\.com\/post\/0,,blog\|news,2023-05-01T08:00:00\.000Z,,,,,,,0,false,false,,false$/,
  );
  await page.goto(`${server.appUrl}/links/import`);
  await page.getByLabel("CSV file").setInputFiles(file);
  await page.getByRole("button", { name: "Upload and preview" }).click();
  await page.getByTestId("detected-format").waitFor();
  expect(await page.getByTestId("detected-format").textContent()).toMatch(/^Generic CSV/);
  await page.getByRole("button", { name: /^Import 19,997 rows$/ }).click();
  await page.getByRole("heading", { name: "Nothing new: every link was already here" }).waitFor({ timeout: 120_000 });
  expect(await page.getByTestId("import-counts").textContent()).toBe("19,997 of 19,997 rows (100%) · 0 created · 19,997 skipped · 0 rejected");
  expect(page.problems).toEqual([]);
}, 180_000);

it("a file that is not CSV, an empty file, invalid UTF-8 and a file over 20 MB each get a clear error, and nothing is imported", async () => {
  const cases: [string, Buffer, RegExp][] = [
    ["logo.png", Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]), /is not a CSV text file/],
    ["empty.csv", Buffer.alloc(0), /is empty/],
    ["latin1.csv", Buffer.concat([Buffer.from("url,slug\nhttps://example.com/caf"), Buffer.from([0xe9]), Buffer.from(",cafe\n")]), /is not UTF-8 text/],
    ["broken.csv", Buffer.from('url,slug\n"https://example.com/a,b\n'), /line 2: a quoted field is never closed/],
  ];
  const recent = () => page.getByRole("region", { name: "Recent imports" }).locator("li").count();
  await page.goto(`${server.appUrl}/links/import`);
  const before = await recent();
  for (const [name, content, message] of cases) {
    await page.goto(`${server.appUrl}/links/import`);
    const file = path.join(server.dataDir, name);
    writeFileSync(file, content);
    await page.getByLabel("CSV file").setInputFiles(file);
    await page.getByRole("button", { name: "Upload and preview" }).click();
    await page.getByRole("alert").waitFor();
    expect(await page.locator(".field-error").textContent(), name).toMatch(message);
  }
  await shot(page, "import-bad-file");
  // 50 MB: the page says so before uploading; a client that sends it anyway gets 413 at once.
  const big = path.join(server.dataDir, "big.csv");
  writeFileSync(big, Buffer.alloc(50 * 1024 * 1024, "a"));
  await page.goto(`${server.appUrl}/links/import`);
  await page.getByLabel("CSV file").setInputFiles(big);
  await page.getByRole("button", { name: "Upload and preview" }).click();
  await page.getByRole("alert").waitFor();
  expect(await page.locator(".field-error").textContent()).toBe("is larger than 20 MB");
  const cookie = (await ctx.cookies()).map((c) => `${c.name}=${c.value}`).join("; ");
  const res = await postLarge(`${server.appUrl}/links/import`, 50 * 1024 * 1024, { cookie, origin: server.appUrl });
  expect(res.status).toBe(413);
  expect(JSON.parse(res.body)).toEqual({ error: "PAYLOAD_TOO_LARGE" });
  expect(res.sent, "answered before the whole body was sent").toBeLessThan(50 * 1024 * 1024);
  // Nothing came of any of them: no new import.
  await page.goto(`${server.appUrl}/links/import`);
  expect(await recent()).toBe(before);
  expect(page.problems).toEqual([]);
}, 180_000);

it("an import whose every row is rejected says so in red; a taken slug can get a new one, shown with its new short URL", async () => {
  const s = Date.now().toString(36);
  const upload = async (name: string, content: string) => {
    const file = path.join(server.dataDir, name);
    writeFileSync(file, content);
    await page.goto(`${server.appUrl}/links/import`);
    await page.getByLabel("CSV file").setInputFiles(file);
    await page.getByRole("button", { name: "Upload and preview" }).click();
    await page.getByTestId("detected-format").waitFor();
  };
  const finished = async () => {
    const outcome = page.getByTestId("import-outcome");
    await outcome.waitFor();
    for (let i = 0; i < 600 && (await outcome.getAttribute("data-tone")) === "busy"; i++) await new Promise((r) => setTimeout(r, 100));
    return outcome;
  };

  await upload("all-bad.csv", `url,slug\nftp://a,bad1-${s}\nnot a url,bad2-${s}\n`);
  await page.getByRole("button", { name: "Import 2 rows" }).click();
  const outcome = await finished();
  expect(await outcome.textContent()).toBe("Nothing imported: every row was rejected");
  expect(await page.getByTestId("import-progress").getAttribute("data-tone")).toBe("bad");
  expect(await page.getByRole("alert").textContent()).toContain("No link was created");
  expect(await page.getByRole("table", { name: "Rejected rows" }).locator("tbody tr").allTextContents()).toEqual([
    `1bad1-${s}ftp://aVALIDATION_FAILEDurl: must be an absolute http or https URL`,
    `2bad2-${s}not a urlVALIDATION_FAILEDurl: must be an absolute http or https URL`,
  ]);
  await shot(page, "import-all-rejected");

  // A slug this workspace already uses for another URL: the mapping step offers a new slug.
  await upload("own.csv", `url,slug\nhttps://example.com/own-${s},own-${s}\n`);
  await page.getByRole("button", { name: "Import 1 rows" }).click();
  expect(await (await finished()).textContent()).toBe("Import finished");
  await upload("taken.csv", `url,slug\nhttps://example.com/other-${s},own-${s}\n`);
  await page.getByLabel("When a row's slug is taken").selectOption("generate");
  await page.getByRole("button", { name: "Import 1 rows" }).click();
  expect(await (await finished()).textContent()).toBe("Import finished, 1 under a new short URL");
  const moved = page.getByRole("table", { name: "Rows with a new short URL" });
  expect(await moved.locator("tbody tr").first().textContent()).toMatch(
    new RegExp(`^1own-${s}https://example.com/other-${s}http://127\\.0\\.0\\.1:\\d+/[0-9a-z]{4}$`),
  );
  // The recent imports' links are told apart from the text around them by more than colour.
  await page.goto(`${server.appUrl}/links/import`);
  const recentLink = page.getByRole("region", { name: "Recent imports" }).getByRole("link").first();
  expect(await recentLink.evaluate((a) => getComputedStyle(a).textDecorationLine)).toBe("underline");
  expect(page.problems).toEqual([]);
}, 120_000);
