// Runs after `npm install` / `npm ci` (postinstall): mends defects of postgres.js 3.4.9 in place.
//
// 1. A connection whose socket failed while a query was running (ECONNRESET) keeps that query as its
//    current one. Reconnected later for another query, it takes a server's refusal at start-up (FATAL:
//    database not accepting connections, too many clients, starting up) for that stale query's error
//    and waits for an answer that never comes: the new query reconnects for ever instead of failing,
//    so a request waited instead of answering 503 (docs/performance.md; db/refused-connections.test.ts).
//    A new socket has no query running: this clears it there.
// 2. A connection whose socket closed (its backend terminated: a failover, pg_terminate_backend) is
//    left with no socket until it reconnects, but a query can still reach it: a transaction's ROLLBACK
//    after its failure, a COPY's data. Small writes wait for the next turn of the event loop, and that
//    deferred write then threw on the missing socket, outside any query, and ended the process. A
//    query given to a connection with no socket now fails at once (CONNECTION_CLOSED), as does a write
//    left with none; the query a reconnection is for is not touched. Either answers true ("not
//    full"): false would move the closed connection to the pool's full queue, where no reconnection
//    ever takes it back, and every later query waited. Closing also drops
//    what was waiting to be written, which the next socket would otherwise have sent first (before its
//    start-up message) and, with the stale timer kept, never flushed its own small writes
//    The error a terminated backend sent last (FATAL: terminating connection) is dropped with its
//    socket too: the next connection's first query failed with it once it had started up
//    (db/terminated-connections.test.ts).
// 3. A transaction's BEGIN reserves its connection in a hook that ran only when the connection could
//    take more queries: the BEGIN that filled a connection's pipeline (100 queries, reached when many
//    requests wait for few connections) went out unreserved, failed with UNSAFE_TRANSACTION (a 500)
//    and left the server's transaction open on a connection back in the pool (seen as a 500 in
//    server/lib/rate-limit.test.ts on PostgreSQL with rate limits in memory: 105 link creations at
//    once). The hook now runs whenever the query was written, and the connection waits as before.
// 4. A connection whose peer stops answering without closing (a network partition, a stalled proxy,
//    a frozen host) kept its queries waiting until the kernel gave up on the socket, many minutes
//    later: requests hung instead of answering 503. A connection with a query waiting for its answer
//    that hears nothing for `replySilence` seconds (a property of the `socket` factory, set by
//    db/client.ts; none: no limit) now destroys its socket, and its queries fail with
//    CONNECTION_CLOSED as when the peer closes (db/stalled-connections.test.ts). Any byte heard
//    restarts the wait; an idle connection has nothing to wait for. A wait that ran out is judged only
//    after the event loop's next reads, so a loop held up past it does not end a connection whose
//    answer came meanwhile.
//
// Exact text, so another version of postgres.js stops the install here instead of running unmended.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

const MARK = "/* mended by scripts/patch-postgres.mjs */";
const closedError = "Errors.connection('CONNECTION_CLOSED', options)";
/**
 * A reply wait that ran out is judged after the event loop's next reads: when the loop was held up
 * (a long synchronous task), the timer runs before the bytes that arrived meanwhile are read, and
 * took a healthy connection for a silent one (db/stalled-connections.test.ts).
 */
const SILENT =
  "  function silent() {\n    replyTimer = null\n" + "    setImmediate(() => socket && (query || sent.length) && !replyTimer && socket.destroy())\n  }\n";
/** The first version of `silent`, which an install mended before has: replaced by SILENT. */
const SILENT_BEFORE = "  function silent() {\n    replyTimer = null\n    socket && (query || sent.length) && socket.destroy()\n  }\n";
/** [text, replacement, how many times the text must occur (0: where an earlier mend left it, if at all)]. */
const mends = [
  [SILENT_BEFORE, SILENT, 0],
  ["    socket || (socket = await createSocket())\n", `    socket || (query = null ${MARK}, socket = await createSocket())\n`, 1],
  [
    "      return queryError(q, Errors.connection('CONNECTION_DESTROYED', options))\n\n",
    `      return queryError(q, Errors.connection('CONNECTION_DESTROYED', options))\n\n    if (!socket) ${MARK}\n      return (queryError(q, ${closedError}), true)\n\n`,
    1,
  ],
  [
    "  function nextWrite(fn) {\n    const x = socket.write(chunk, fn)\n",
    `  function nextWrite(fn) {\n    if (!socket) { ${MARK}\n      chunk = nextWriteTimer = null\n      query && queryError(query, ${closedError})\n      while (sent.length) queryError(sent.shift(), ${closedError})\n      return true\n    }\n    const x = socket.write(chunk, fn)\n`,
    1,
  ],
  [
    "      return write(toBuffer(q))\n        && !q.describeFirst\n        && !q.cursorFn\n        && sent.length < max_pipeline\n        && (!q.options.onexecute || q.options.onexecute(connection))\n",
    `      const written = write(toBuffer(q)) ${MARK}\n      if (q.options.onexecute)\n        return (q.options.onexecute(connection), false)\n      return written\n        && !q.describeFirst\n        && !q.cursorFn\n        && sent.length < max_pipeline\n`,
    1,
  ],
  ["      statements = {}\n", `      statements = {}, errorResponse = null ${MARK}\n`, 1],
  ["    clearImmediate(nextWriteTimer)\n", `    clearImmediate(nextWriteTimer), chunk = nextWriteTimer = null ${MARK}\n`, 2],
  [
    "        socket.write(b().d().raw(chunk).end(), callback)\n",
    `        socket ? socket.write(b().d().raw(chunk).end(), callback) : callback(${closedError}) ${MARK}\n`,
    2,
  ],
  ["        socket.write(b().f().str(error + b.N).end())\n", `        socket && socket.write(b().f().str(error + b.N).end()) ${MARK}\n`, 2],
  [
    "        socket.write(b().c().end())\n        final = callback\n",
    `        if (!socket) return callback(${closedError}) ${MARK}\n        socket.write(b().c().end())\n        final = callback\n`,
    2,
  ],
  [
    "      , connectTimer = timer(connectTimedOut, options.connect_timeout)\n",
    "      , connectTimer = timer(connectTimedOut, options.connect_timeout)\n" +
      `      , replySilence = (options.socket && options.socket.replySilence) || 0 ${MARK}\n` +
      "  let replyTimer = null\n" +
      "  function awaitReply() {\n    replySilence && !replyTimer && (replyTimer = setTimeout(silent, replySilence * 1000))\n  }\n" +
      "  function heard() {\n    replyTimer && (clearTimeout(replyTimer), replyTimer = null)\n    ;(query || sent.length) && awaitReply()\n  }\n" +
      SILENT,
    1,
  ],
  ["    const x = socket.write(chunk, fn)\n", `    const x = socket.write(chunk, fn)\n    awaitReply() ${MARK}\n`, 1],
  ["  function data(x) {\n", `  function data(x) {\n    heard() ${MARK}\n`, 1],
  [
    "    idleTimer.cancel()\n    lifeTimer.cancel()\n",
    `    idleTimer.cancel()\n    lifeTimer.cancel()\n    replyTimer && (clearTimeout(replyTimer), replyTimer = null) ${MARK}\n`,
    1,
  ],
];

// npm runs install scripts in the project's root.
const root = path.resolve("node_modules/postgres");
const { version } = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
if (version !== "3.4.9") {
  console.error(
    `scripts/patch-postgres.mjs: written for postgres 3.4.9, found ${version}: check whether the defects are fixed, then update or drop this script`,
  );
  process.exit(1);
}
for (const file of ["src/connection.js", "cjs/src/connection.js"]) {
  const p = path.join(root, file);
  let text = readFileSync(p, "utf8");
  for (const [before, after, times] of mends) {
    if (text.includes(after)) continue;
    if (times === 0) {
      text = text.split(before).join(after);
      continue;
    }
    if (text.split(before).length !== times + 1) {
      console.error(`scripts/patch-postgres.mjs: the text to mend is not in ${p} exactly ${times} time(s):\n${before}`);
      process.exit(1);
    }
    text = text.split(before).join(after);
  }
  writeFileSync(p, text);
}
