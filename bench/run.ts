/**
 * `npm run bench`: the project's figures, printed as a table and written to bench/results.md.
 *
 * Dispatch, side by side with graphile-worker (bench/Dispatch.ts, appended to results.md under its own
 * heading): throughput through the zero-latency sandbox, and 10,000 destinations due in one second;
 * POST /posts requests per second over real HTTP, when the server has the posts endpoint.
 *
 * Sizes can be scaled with BENCH_SCALE (default 1). Postgres parts are skipped with a reason when no
 * Postgres answers at HERALD_TEST_PG_URL.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as DispatchBench from "./Dispatch.js"
import * as PostsHttp from "./PostsHttp.js"

const scale = Number(process.env.BENCH_SCALE ?? "1")
const n = (base: number) => Math.max(10, Math.round(base * scale))

interface Row {
  readonly benchmark: string
  readonly store: string
  readonly processes: string
  readonly items: number
  readonly seconds: number
  readonly figure: string
}

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
    console.log("(c) POST /posts over HTTP")
    const posts = await PostsHttp.run({ dataDir: path.join(tmp, "http"), requests: n(2000) })
    if (posts._tag === "Skipped") notes.push(`POST /posts skipped: ${posts.reason}`)
    else {
      record({
        benchmark: "POST /posts over HTTP",
        store: "sqlite (synchronous=FULL)",
        processes: `1 server, ${posts.connections} concurrent clients`,
        items: posts.requests,
        seconds: posts.seconds,
        figure: `${(posts.requests / posts.seconds).toFixed(0)} requests/s (p50 ${posts.p50.toFixed(1)} ms, p99 ${
          posts.p99.toFixed(1)
        } ms)`
      })
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true })
  }
  write()
  fs.appendFileSync(path.join(import.meta.dirname, "results.md"), DispatchBench.markdown(dispatch, machine()))
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
    "POST /posts creates drafts targeting one account over keep-alive HTTP: drafts",
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
  fs.writeFileSync(path.join(import.meta.dirname, "results.md"), md)
  console.log("\nwritten to bench/results.md")
}

await main()
