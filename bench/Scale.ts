/**
 * `npm run bench:scale`: the API's list, count and analytics reads on a filled store, over HTTP
 * against a real `herald serve --sandbox`, next to a hand-written SQL statement for the same answer
 * on the same database in the same run.
 *
 * Per store (SQLite, Postgres) and size (posts): a server migrates a fresh store and creates one post
 * of each kind through the API; it stops; the store is then filled in bulk by INSERT … SELECT over a
 * numbers table, every row copied from those template rows (Herald's own row shapes) with its id,
 * times, content and status varied: posts, targets, destinations (with metrics), events, webhook
 * deliveries and media. The server starts again on the filled store (its start-up time is reported)
 * and each read runs sequentially: p50/p99 of the API and of the statement, their ratio, the growth
 * from the previous size, and the longest `/health/live` wait while the slowest read runs.
 *
 *   npm run bench:scale -- [--sizes 10000,100000] [--stores sqlite,pg] [--baseline /work/main]
 *     [--samples 15] [--baseline-only]
 *
 * `--baseline DIR` runs the same measurements against another checkout's build first (before/after in
 * one run). Sizes are posts; 1M is `--sizes 1000000` (minutes of seeding, GiBs of disk).
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { createFreshPgDatabase, probePostgres } from "../packages/adapters/test/support/TestDatabases.js"
import * as HeraldServer from "./HeraldServer.js"
import { type Db, pgDb, rareWord, resetFailed, seed, sqliteDb } from "./ScaleSeed.js"
import { prepareTemplates } from "./ScaleTemplates.js"

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? undefined : process.argv[i + 1]
}

const sizes = (arg("sizes") ?? "10000,100000").split(",").map(Number)
const stores = (arg("stores") ?? "sqlite,pg").split(",") as Array<"sqlite" | "pg">
const baseline = arg("baseline")
/** `--baseline-only`: measure only the `--baseline` checkout (its "before" figures, e.g. while this build is not built yet). */
const baselineOnly = process.argv.includes("--baseline-only")
const samples = Number(arg("samples") ?? "15")
/** A read stops sampling after this long (at least 3 samples). */
const budgetMs = Number(arg("budget-ms") ?? "8000")
const retryPlatform = "telegram"

// ---------------------------------------------------------------------------------------------------
// Measuring

const quantile = (sorted: ReadonlyArray<number>, q: number): number =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!

interface Figure {
  readonly p50: number
  readonly p99: number
}

const sample = async (run: () => Promise<void>, before?: () => Promise<void>): Promise<Figure> => {
  const times: Array<number> = []
  const until = performance.now() + budgetMs
  while (times.length < samples && (times.length < 3 || performance.now() < until)) {
    if (before !== undefined) await before()
    const t0 = performance.now()
    await run()
    times.push(performance.now() - t0)
  }
  times.sort((a, b) => a - b)
  return { p50: quantile(times, 0.5), p99: quantile(times, 0.99) }
}

interface Statement {
  readonly text: string
  readonly params: ReadonlyArray<unknown>
  readonly write?: boolean
}

interface Read {
  readonly name: string
  readonly http: { readonly method: "GET" | "POST"; readonly path: string; readonly body?: unknown }
  /** The hand-written statements that give the same answer (run one after another). */
  readonly sql: (org: string, now: number) => ReadonlyArray<Statement>
  /**
   * Statements that depend on each other's rows (a write and the read-back of what it wrote), in a
   * transaction that is rolled back; measured instead of `sql` when given.
   */
  readonly transaction?: (db: Db, org: string, now: number) => Promise<void>
  /** The read writes: the seeded failed destinations are set back to failed before each sample of either side. */
  readonly resets?: boolean
  /**
   * A read whose request and statements depend on the store (a cursor the server hands out): made
   * once before sampling; undefined when the build cannot make it (the read is then not measured).
   */
  readonly prepare?: (
    context: {
      readonly server: HeraldServer.HeraldServer
      readonly db: Db
      readonly org: string
      readonly size: number
    }
  ) => Promise<
    { readonly path: string; readonly sql: ReadonlyArray<Statement> } | undefined
  >
}

/** The page's destinations, as the API returns them with each post. */
const pageDestinations = (page: string) =>
  `SELECT d.* FROM destinations d WHERE d.post_id IN (SELECT id FROM (${page}) pg) ORDER BY d.created_at, d.id`

/** Core's derived post status over the base row shapes (the reference needs no Herald-maintained column). */
const derived = `CASE WHEN p.is_draft = 1 THEN 'draft'
  WHEN NOT EXISTS (SELECT 1 FROM destinations d WHERE d.post_id = p.id) THEN 'scheduled'
  WHEN NOT EXISTS (SELECT 1 FROM destinations d WHERE d.post_id = p.id AND d.status <> 'queued')
    THEN CASE WHEN p.scheduled_for IS NULL THEN 'publishing' ELSE 'scheduled' END
  WHEN EXISTS (SELECT 1 FROM destinations d WHERE d.post_id = p.id AND d.status IN ('publishing', 'queued')) THEN 'publishing'
  WHEN NOT EXISTS (SELECT 1 FROM destinations d WHERE d.post_id = p.id AND d.status <> 'published') THEN 'published'
  WHEN NOT EXISTS (SELECT 1 FROM destinations d WHERE d.post_id = p.id AND d.status <> 'failed') THEN 'failed'
  ELSE 'partially_failed' END`

const listed = (where: string) => {
  const page =
    `SELECT p.* FROM posts p WHERE p.organization_id = $1 ${where} ORDER BY p.created_at DESC, p.id DESC LIMIT 20`
  return [
    { text: page, params: ["org"] },
    { text: pageDestinations(page), params: ["org"] },
    { text: `SELECT COUNT(*) AS c FROM posts p WHERE p.organization_id = $1 ${where}`, params: ["org"] }
  ]
}

const onlyFailed =
  `AND p.is_draft = 0 AND EXISTS (SELECT 1 FROM destinations d WHERE d.post_id = p.id AND d.status = 'failed')
  AND NOT EXISTS (SELECT 1 FROM destinations d WHERE d.post_id = p.id AND d.status <> 'failed')`

/**
 * GET /analytics/summary for the calendar periods and an unaligned custom range (a week starting and
 * ending mid-day), each beside the grouped statements over the base rows for the same range.
 */
const analyticsPeriods = (metric: (m: string) => string): ReadonlyArray<Read> => {
  const day = 86_400_000
  const today = Math.floor(Date.now() / day) * day
  const weekday = (new Date(today).getUTCDay() + 6) % 7
  const monthStart = Date.UTC(new Date(today).getUTCFullYear(), new Date(today).getUTCMonth(), 1)
  const customFrom = today - 20 * day + 3 * 3_600_000 + 17 * 60_000
  const customTo = customFrom + 7 * day + 5 * 3_600_000
  const ranges: ReadonlyArray<{ name: string; query: string; from: number; to: number }> = [
    { name: "today", query: "period=today", from: today, to: today + day },
    { name: "week", query: "period=week", from: today - weekday * day, to: today + (7 - weekday) * day },
    {
      name: "month",
      query: "period=month",
      from: monthStart,
      to: Date.UTC(new Date(today).getUTCFullYear(), new Date(today).getUTCMonth() + 1, 1)
    },
    {
      name: "custom (unaligned week)",
      query: `period=custom&from=${new Date(customFrom).toISOString()}&to=${new Date(customTo).toISOString()}`,
      from: customFrom,
      to: customTo
    }
  ]
  return ranges.map((r) => ({
    name: `GET /analytics/summary?period=${r.name}`,
    http: { method: "GET", path: `/analytics/summary?${r.query}` },
    sql: (o) => [
      {
        text: `SELECT s, COUNT(*) AS c FROM (SELECT ${derived} AS s FROM posts p WHERE p.organization_id = $1
          AND p.created_at >= $2 AND p.created_at < $3) x GROUP BY s`,
        params: [o, r.from, r.to]
      },
      {
        text: `SELECT d.platform, d.status, COUNT(*) AS c, ${
          ["views", "likes", "comments", "shares", "impressions", "saves", "clicks"].map(metric).join(", ")
        } FROM destinations d JOIN posts p ON p.id = d.post_id WHERE d.organization_id = $1
          AND p.created_at >= $2 AND p.created_at < $3 GROUP BY d.platform, d.status`,
        params: [o, r.from, r.to]
      }
    ]
  }))
}

const reads = (dialect: Db["dialect"]): ReadonlyArray<Read> => {
  const like = dialect === "pg" ? "ILIKE" : "LIKE"
  const metric = (m: string) =>
    dialect === "pg"
      ? `COALESCE(SUM((d.metrics::jsonb ->> '${m}')::bigint), 0)`
      : `COALESCE(SUM(json_extract(d.metrics, '$.${m}')), 0)`
  const org = (list: ReadonlyArray<{ text: string; params: ReadonlyArray<unknown> }>) => (o: string) =>
    list.map((s) => ({ text: s.text, params: s.params.map((p) => (p === "org" ? o : p)) }))
  return [
    { name: "GET /posts (default page)", http: { method: "GET", path: "/posts" }, sql: org(listed("")) },
    {
      name: "GET /posts?status=failed",
      http: { method: "GET", path: "/posts?status=failed" },
      sql: org(listed(onlyFailed))
    },
    {
      name: "GET /posts?search=<rare word>",
      http: { method: "GET", path: `/posts?search=${rareWord}` },
      sql: org(listed(`AND p.content ${like} '%${rareWord}%'`))
    },
    {
      name: "GET /posts?approval=pending",
      http: { method: "GET", path: "/posts?approval=pending" },
      sql: org(listed("AND p.approval_status = 'pending'"))
    },
    {
      name: "GET /me",
      http: { method: "GET", path: "/me" },
      sql: (o) => [
        {
          text:
            `SELECT s, COUNT(*) AS c FROM (SELECT ${derived} AS s FROM posts p WHERE p.organization_id = $1) x GROUP BY s`,
          params: [o]
        },
        { text: "SELECT COALESCE(SUM(size), 0) AS b FROM media WHERE organization_id = $1", params: [o] }
      ]
    },
    {
      name: "GET /analytics/summary?period=all",
      http: { method: "GET", path: "/analytics/summary?period=all" },
      sql: (o) => [
        {
          text:
            `SELECT s, COUNT(*) AS c FROM (SELECT ${derived} AS s FROM posts p WHERE p.organization_id = $1) x GROUP BY s`,
          params: [o]
        },
        {
          text: `SELECT d.platform, d.status, COUNT(*) AS c, ${
            ["views", "likes", "comments", "shares", "impressions", "saves", "clicks"].map(metric).join(", ")
          } FROM destinations d WHERE d.organization_id = $1 GROUP BY d.platform, d.status`,
          params: [o]
        }
      ]
    },
    ...analyticsPeriods(metric),
    {
      name: "GET /posts?offset=<half the store>",
      http: { method: "GET", path: "/posts" },
      sql: () => [],
      prepare: async ({ org, size }) => {
        const offset = Math.floor(size / 2)
        const page =
          `SELECT p.* FROM posts p WHERE p.organization_id = $1 ORDER BY p.created_at DESC, p.id DESC LIMIT 20 OFFSET ${offset}`
        return {
          path: `/posts?offset=${offset}`,
          sql: [
            { text: page, params: [org] },
            { text: pageDestinations(page), params: [org] },
            { text: "SELECT COUNT(*) AS c FROM posts p WHERE p.organization_id = $1", params: [org] }
          ]
        }
      }
    },
    {
      name: "GET /posts?cursor=<half the store>",
      http: { method: "GET", path: "/posts" },
      sql: () => [],
      // The cursor the server hands out after the post half-way down the default order; the
      // statement is the keyset page after that post's (created_at, id).
      prepare: async ({ server, db, org, size }) => {
        const offset = Math.floor(size / 2)
        const res = await send(`${server.base}/posts?offset=${offset - 1}&limit=1`, {
          method: "GET",
          headers: { authorization: `Bearer ${server.key}` }
        })
        const cursor =
          (JSON.parse(res.text) as { data: { pagination: { next_cursor?: string | null } } }).data.pagination
            .next_cursor
        if (typeof cursor !== "string") return undefined
        const at = (await db.all(
          `SELECT created_at, id FROM posts WHERE organization_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET ${
            offset - 1
          }`,
          [org]
        ))[0]!
        const page =
          `SELECT p.* FROM posts p WHERE p.organization_id = $1 AND (p.created_at, p.id) < (CAST($2 AS BIGINT), CAST($3 AS TEXT))
          ORDER BY p.created_at DESC, p.id DESC LIMIT 20`
        const params = [org, Number(at.created_at), String(at.id)]
        return {
          path: `/posts?cursor=${cursor}`,
          sql: [
            { text: page, params },
            { text: pageDestinations(page), params },
            { text: "SELECT COUNT(*) AS c FROM posts p WHERE p.organization_id = $1", params: [org] }
          ]
        }
      }
    },
    {
      name: `POST /posts/retry-failed (platform=${retryPlatform})`,
      http: { method: "POST", path: "/posts/retry-failed", body: { platform: retryPlatform } },
      resets: true,
      sql: () => [],
      transaction: retryAnswer
    }
  ]
}

/**
 * POST /posts/retry-failed's answer by hand, as the API gives it in one transaction: the failed
 * destinations of the platform, oldest posts first, up to 500, re-queued (returning them); whether
 * failed ones remain (`has_more`); the re-queued posts and their destinations read back.
 */
const retryAnswer = async (db: Db, org: string, now: number): Promise<void> => {
  await db.exec(db.dialect === "pg" ? "BEGIN" : "BEGIN IMMEDIATE")
  try {
    const updated = await db.all(
      `UPDATE destinations SET status = 'queued', due_at = $2, attempts = 0, error = NULL, failed_at = NULL,
        updated_at = $2
      WHERE id IN (SELECT d.id FROM destinations d JOIN posts p ON p.id = d.post_id
        WHERE d.organization_id = $1 AND d.status = 'failed' AND d.platform = '${retryPlatform}'
        ORDER BY p.created_at, d.id LIMIT 500)
      RETURNING id, post_id`,
      [org, now]
    )
    await db.all(
      `SELECT 1 FROM destinations d WHERE d.organization_id = $1 AND d.status = 'failed'
        AND d.platform = '${retryPlatform}' LIMIT 1`,
      [org]
    )
    const ids = JSON.stringify([...new Set(updated.map((row) => String(row.post_id)))])
    const among = db.dialect === "pg"
      ? "IN (SELECT jsonb_array_elements_text($1::jsonb))"
      : "IN (SELECT value FROM json_each($1))"
    await db.all(`SELECT * FROM posts WHERE id ${among} ORDER BY created_at, id`, [ids])
    await db.all(`SELECT * FROM destinations WHERE post_id ${among} ORDER BY created_at, id`, [ids])
  } finally {
    await db.exec("ROLLBACK")
  }
}

interface Measured {
  readonly name: string
  readonly api: Figure
  readonly sql: Figure
}

interface Run {
  readonly build: string
  readonly store: "sqlite" | "pg"
  readonly size: number
  readonly seedSeconds: number
  readonly startSeconds: number
  readonly bytes: number
  readonly reads: ReadonlyArray<Measured>
  readonly stall: { readonly read: string; readonly liveMaxMs: number; readonly requestMs: number }
}

/**
 * One request on its own connection (node:http, no keep-alive): a socket idle across a long reset
 * would be closed by the server's keep-alive timeout just as the next request is sent.
 */
const send = (
  url: string,
  init: { readonly method: string; readonly headers?: Record<string, string>; readonly body?: string }
) =>
  new Promise<{ readonly status: number; readonly text: string }>((resolve, reject) => {
    const req = http.request(url, { method: init.method, headers: init.headers ?? {}, agent: false }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }))
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end(init.body)
  })

const request = async (server: HeraldServer.HeraldServer, read: Read) => {
  const response = await send(`${server.base}${read.http.path}`, {
    method: read.http.method,
    headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
    ...(read.http.body === undefined ? {} : { body: JSON.stringify(read.http.body) })
  })
  if (response.status >= 300) throw new Error(`${read.name}: ${response.status} ${response.text.slice(0, 300)}`)
}

/** The longest `/health/live` round trip while `read` runs three times. */
const stallDuring = async (server: HeraldServer.HeraldServer, read: Read) => {
  let running = true
  let liveMax = 0
  const poll = (async () => {
    while (running) {
      const t0 = performance.now()
      await send(`${server.base}/health/live`, { method: "GET" })
      liveMax = Math.max(liveMax, performance.now() - t0)
      await HeraldServer.sleep(2)
    }
  })()
  const t0 = performance.now()
  for (let k = 0; k < 3; k++) await request(server, read)
  const requestMs = (performance.now() - t0) / 3
  running = false
  await poll
  return { read: read.name, liveMaxMs: liveMax, requestMs }
}

const runOne = async (options: {
  readonly build: string
  readonly root: string
  readonly store: "sqlite" | "pg"
  readonly size: number
}): Promise<Run> => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-scale-"))
  const pgDatabase = options.store === "pg" ? await Effect.runPromise(createFreshPgDatabase()) : undefined
  const env: Record<string, string> = pgDatabase === undefined ? {} : { HERALD_DATABASE_URL: pgDatabase.url }
  try {
    const first = await HeraldServer.start({ dataDir, env, repoRoot: options.root })
    await prepareTemplates(first)
    await first.stop()
    const db = pgDatabase === undefined ? sqliteDb(path.join(dataDir, "herald.db")) : await pgDb(pgDatabase.url)
    try {
      const now = Date.now()
      const seeded = await seed(db, options.size, now)
      const bytes = await db.bytes()
      console.log(
        `  seeded ${options.size} posts in ${seeded.seedSeconds.toFixed(1)} s (${(bytes / 2 ** 20).toFixed(0)} MiB)`
      )
      const t0 = performance.now()
      const server = await HeraldServer.start({ dataDir, env, repoRoot: options.root, key: first.key })
      const startSeconds = (performance.now() - t0) / 1000
      try {
        const measured: Array<Measured> = []
        for (const planned of reads(db.dialect)) {
          const prepared = planned.prepare === undefined
            ? undefined
            : await planned.prepare({ server, db, org: seeded.organizationId, size: options.size })
          if (planned.prepare !== undefined && prepared === undefined) {
            console.log(`  ${planned.name.padEnd(44)} not offered by this build`)
            continue
          }
          const read: Read = prepared === undefined
            ? planned
            : { ...planned, http: { ...planned.http, path: prepared.path }, sql: () => prepared.sql }
          await request(server, read) // warm
          const api = await sample(() => request(server, read), read.resets ? () => resetFailed(db) : undefined)
          const statements = read.sql(seeded.organizationId, Date.now())
          const transaction = read.transaction
          const sqlFigure = await sample(
            async () => {
              if (transaction !== undefined) await transaction(db, seeded.organizationId, Date.now())
              for (const s of statements) {
                if (s.write === true) await db.rolledBack(s.text, s.params)
                else await db.all(s.text, s.params)
              }
            },
            // The same failed destinations as the API's samples found (its last one re-queued them).
            read.resets ? () => resetFailed(db) : undefined
          )
          measured.push({ name: read.name, api, sql: sqlFigure })
          console.log(
            `  ${read.name.padEnd(44)} api p50 ${api.p50.toFixed(1).padStart(8)} p99 ${
              api.p99.toFixed(1).padStart(8)
            }` +
              ` | sql p50 ${sqlFigure.p50.toFixed(1).padStart(7)} | x${(api.p50 / sqlFigure.p50).toFixed(1)}`
          )
        }
        const slowest = reads(db.dialect).filter((r) => r.resets !== true && r.prepare === undefined).reduce((
          a,
          b
        ) => (measured.find((m) => m.name === a.name)!.api.p50 >= measured.find((m) => m.name === b.name)!.api.p50
          ? a
          : b)
        )
        const stall = await stallDuring(server, slowest)
        console.log(
          `  /health/live longest wait ${stall.liveMaxMs.toFixed(1)} ms while ${stall.read} (${
            stall.requestMs.toFixed(0)
          } ms) ran`
        )
        return { ...options, seedSeconds: seeded.seedSeconds, startSeconds, bytes, reads: measured, stall }
      } catch (error) {
        console.error(server.output().slice(-3000))
        throw error
      } finally {
        await server.stop()
      }
    } finally {
      await db.close()
    }
  } finally {
    if (pgDatabase !== undefined) await Effect.runPromise(pgDatabase.drop)
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

const fmt = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`)

const report = (runs: ReadonlyArray<Run>): string => {
  const lines: Array<string> = []
  for (const build of [...new Set(runs.map((r) => r.build))]) {
    for (const store of stores) {
      const mine = runs.filter((r) => r.build === build && r.store === store).sort((a, b) => a.size - b.size)
      if (mine.length === 0) continue
      lines.push(`\n### ${build}, ${store}\n`)
      lines.push(
        `| read | ${mine.map((r) => `${r.size} posts: api p50 / p99 | sql p50 | ratio`).join(" | ")} | growth |`
      )
      lines.push(`|---|${mine.map(() => "---|---|---|").join("")}---|`)
      for (const name of [...new Set(mine.flatMap((r) => r.reads.map((m) => m.name)))]) {
        const cells = mine.map((r) => {
          const m = r.reads.find((x) => x.name === name)
          return m === undefined
            ? "— | — | —"
            : `${fmt(m.api.p50)} / ${fmt(m.api.p99)} | ${fmt(m.sql.p50)} | ${(m.api.p50 / m.sql.p50).toFixed(1)}×`
        })
        const growth = mine.slice(1).map((r, k) => {
          const now = r.reads.find((x) => x.name === name)
          const before = mine[k]!.reads.find((x) => x.name === name)
          return now === undefined || before === undefined ? "—" : `${(now.api.p50 / before.api.p50).toFixed(1)}×`
        }).join(", ")
        lines.push(`| ${name} | ${cells.join(" | ")} | ${growth || "—"} |`)
      }
      for (const r of mine) {
        lines.push(
          `\n${r.size} posts: /health/live waited at most ${fmt(r.stall.liveMaxMs)} while ${r.stall.read} ran ` +
            `(${fmt(r.stall.requestMs)}); store ${(r.bytes / 2 ** 20).toFixed(0)} MiB ` +
            `(${(r.bytes / r.size * 1e5 / 2 ** 20).toFixed(0)} MiB per 100k posts); seeded in ${
              r.seedSeconds.toFixed(1)
            } s; ` +
            `server ready ${r.startSeconds.toFixed(1)} s after start`
        )
      }
    }
  }
  return lines.join("\n")
}

const main = async () => {
  console.log(`Herald scale bench — ${os.cpus().length} cores, Node ${process.version}; sizes ${sizes.join(", ")}`)
  const wanted = [...stores]
  if (wanted.includes("pg")) {
    const probe = await probePostgres
    if (!probe.available) {
      console.log(`Postgres skipped: ${probe.reason}`)
      wanted.splice(wanted.indexOf("pg"), 1)
    }
  }
  const builds: Array<{ name: string; root: string }> = [
    ...(baseline === undefined ? [] : [{ name: `baseline (${baseline})`, root: path.resolve(baseline) }]),
    ...(baselineOnly ? [] : [{ name: "this build", root: path.resolve(import.meta.dirname, "..") }])
  ]
  const runs: Array<Run> = []
  for (const store of wanted) {
    for (const size of sizes) {
      for (const build of builds) {
        console.log(`${build.name}, ${store}, ${size} posts`)
        runs.push(await runOne({ build: build.name, root: build.root, store, size }))
      }
    }
  }
  const text = report(runs)
  console.log(text)
  const out = path.join(os.tmpdir(), `herald-scale-${Date.now()}.md`)
  fs.writeFileSync(out, text)
  console.log(`\n(written to ${out})`)
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
