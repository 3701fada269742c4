/**
 * `npm run bench`: the project's figures, printed as a table and written to bench/results.md (the table
 * replaces the file's first block; the sections below it are kept, and this run's dispatch and start-up
 * sections replace their own, `ResultsFile.replaceSection`).
 *
 * (a, b, d) dispatch, side by side with graphile-worker (bench/Dispatch.ts, written to results.md under
 *     its own heading): throughput through the zero-latency sandbox, and 10,000 destinations due in one
 *     second;
 * (c, e) the request path side by side (bench/RequestPath.ts): POST /posts against a hand-written
 *     node:http + better-sqlite3 create server, authenticated GET /accounts against bare node:http
 *     answering the same JSON, and the resident memory of both, idle and after each load;
 * renditions (bench/Renditions.ts) and the server's cold start, idle RSS and soak (bench/Startup.ts,
 * its own heading).
 *
 * Sizes can be scaled with BENCH_SCALE (default 1). Postgres parts are skipped with a reason when no
 * Postgres answers at HERALD_TEST_PG_URL.
 */
import { replaceSection } from "./ResultsFile.js"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as DispatchBench from "./Dispatch.js"
import type { Line } from "./Renditions.js"
import * as RequestPath from "./RequestPath.js"
import * as RequestPathPg from "./RequestPathPg.js"
import * as Startup from "./Startup.js"

const scale = Number(process.env.BENCH_SCALE ?? "1")

/** One line of the table; every part of the bench reports in this shape. */
type Row = Line

const rows: Array<Row> = []
const notes: Array<string> = []

const record = (row: Row) => {
  rows.push(row)
  console.log(`  ${row.benchmark} | ${row.store} | ${row.processes} | ${row.figure}`)
}

// ---------------------------------------------------------------------------------------------------

const machine = () => {
  const cpus = os.cpus()
  return `${cpus.length} cores (${cpus[0]?.model.trim() ?? "unknown CPU"}), ` +
    `${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM, Node ${process.version}, ${os.type()} ${os.release()}`
}

const main = async () => {
  console.log(`Herald engine benchmarks — ${machine()}`)
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "herald-bench-sqlite-"))
  const dispatch = await DispatchBench.run({ scale })
  try {
    console.log("(c) request path against hand-written peers, 32 keep-alive connections")
    const requestPath = await RequestPath.run({
      dir: path.join(tmp, "request-path"),
      seconds: Math.max(2, 5 * scale),
      rounds: 2
    })
    const side = (what: string, h: RequestPath.Side, p: RequestPath.Side, target: number) => {
      record({
        benchmark: what,
        store: "sqlite (synchronous=FULL)",
        processes: `herald serve / peer, ${requestPath.connections} connections`,
        items: requestPath.rounds,
        seconds: requestPath.seconds * requestPath.rounds,
        figure:
          `${h.rps.toFixed(0)} vs ${p.rps.toFixed(0)} req/s = ${(h.rps / p.rps).toFixed(2)}x (target ${target}x); ` +
          `p50 ${h.p50.toFixed(1)} vs ${p.p50.toFixed(1)} ms, p99 ${h.p99.toFixed(1)} vs ${p.p99.toFixed(1)} ms`
      })
      const failed = { ...h.failures, ...p.failures }
      if (Object.keys(failed).length > 0) {
        notes.push(`${what}: non-2xx answers ${JSON.stringify([h.failures, p.failures])}`)
      }
    }
    side("POST /posts (draft) vs node:http + better-sqlite3", requestPath.posts.herald, requestPath.posts.peer, 0.5)
    side(
      "GET /accounts (authenticated) vs node:http, same JSON",
      requestPath.accounts.herald,
      requestPath.accounts.peer,
      0.25
    )
    const postsPg = await RequestPath.runPostgres({
      dir: path.join(tmp, "request-path-pg"),
      seconds: Math.max(2, 5 * scale),
      rounds: 2
    })
    record({
      benchmark: "POST /posts (draft) vs node:http + pg",
      store: postsPg.available ? `postgres (synchronous_commit=${postsPg.synchronousCommit})` : "postgres",
      processes: `herald serve / peer, ${postsPg.available ? postsPg.connections : 0} connections`,
      items: postsPg.available ? postsPg.rounds : 0,
      seconds: postsPg.available ? postsPg.seconds * postsPg.rounds : 0,
      figure: RequestPathPg.describe(postsPg)
    })
    const mib = (xs: ReadonlyArray<number>) => xs.map((x) => `${x.toFixed(0)}`).join(" / ")
    record({
      benchmark: "RSS MiB: idle / after POST / after GET",
      store: "sqlite (synchronous=FULL)",
      processes: "herald serve vs peer",
      items: 0,
      seconds: 0,
      figure: `${mib(requestPath.rss.herald)} vs ${mib(requestPath.rss.peer)} = ${
        (requestPath.rss.herald[0]! / requestPath.rss.peer[0]!).toFixed(1)
      }x idle`
    })
    for (const line of await (await import("./Renditions.js")).run()) record(line)
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true })
  }
  write()
  replaceSection(
    path.join(import.meta.dirname, "results.md"),
    DispatchBench.heading,
    DispatchBench.markdown(dispatch, machine())
  )
  await Startup.runInto(path.join(import.meta.dirname, "results.md"))
}

const write = () => {
  const header = ["Benchmark", "Store", "Processes", "Items", "Seconds", "Figure"]
  const table = rows.map((r) => [r.benchmark, r.store, r.processes, String(r.items), r.seconds.toFixed(2), r.figure])
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i]!.length)))
  const line = (cells: ReadonlyArray<string>) => cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")
  console.log("\n" + line(header))
  console.log(widths.map((w) => "-".repeat(w)).join("-|-"))
  for (const row of table) console.log(line(row))
  for (const note of notes) console.log(`note: ${note}`)

  const md = [
    "# Engine benchmarks",
    "",
    `Run with \`npm run bench\` on ${new Date().toISOString().slice(0, 10)}: ${machine()}.`,
    "POST /posts creates drafts targeting one account over keep-alive HTTP (rate limits raised): drafts",
    "are validated, hashed and stored with their outbox like any post, but are not counted against the",
    "scheduling allowance (100 a minute), which would answer 429 long before the server is busy.",
    "",
    `| ${header.join(" | ")} |`,
    `|${header.map(() => "---").join("|")}|`,
    ...table.map((row) => `| ${row.join(" | ")} |`),
    "",
    ...notes.map((note) => `- ${note}`),
    ""
  ].join("\n")
  // The table replaces the file's first block; the sections below it (the other programs' figures,
  // and the dispatch and start-up sections this run replaces after it) are kept.
  const file = path.join(import.meta.dirname, "results.md")
  const previous = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : ""
  const sections = previous.indexOf("\n## ")
  fs.writeFileSync(file, sections === -1 ? md : `${md}${previous.slice(sections)}`)
  console.log("\nwritten to bench/results.md")
}

await main()
