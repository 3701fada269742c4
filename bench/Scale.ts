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
 *     [--samples 15]
 *
 * `--baseline DIR` runs the same measurements against another checkout's build first (before/after in
 * one run). Sizes are posts; 1M is `--sizes 1000000` (minutes of seeding, GiBs of disk).
 */
import * as Effect from "effect/Effect"
import { createRequire } from "node:module"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"
import { createFreshPgDatabase, probePostgres } from "../packages/adapters/test/support/TestDatabases.js"
import * as HeraldServer from "./HeraldServer.js"

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? undefined : process.argv[i + 1]
}

const sizes = (arg("sizes") ?? "10000,100000").split(",").map(Number)
const stores = (arg("stores") ?? "sqlite,pg").split(",") as Array<"sqlite" | "pg">
const baseline = arg("baseline")
const samples = Number(arg("samples") ?? "15")
/** A read stops sampling after this long (at least 3 samples). */
const budgetMs = Number(arg("budget-ms") ?? "8000")
/** A word in one post of every 10,007: the rare-word search. */
const rareWord = "quetzal"
const retryPlatform = "telegram"

// ---------------------------------------------------------------------------------------------------
// One dialect-neutral handle on the store the bench seeds and queries beside the server.

interface Db {
  readonly dialect: "sqlite" | "pg"
  readonly all: (text: string, params?: ReadonlyArray<unknown>) => Promise<Array<Record<string, unknown>>>
  readonly exec: (text: string) => Promise<void>
  /** `text` inside a transaction that is rolled back (a write measured without keeping it). */
  readonly rolledBack: (text: string, params?: ReadonlyArray<unknown>) => Promise<void>
  readonly bytes: () => Promise<number>
  readonly close: () => Promise<void>
}

/** The few calls of better-sqlite3 (a dependency of the adapters, without type declarations) used here. */
interface SqliteStatement {
  readonly reader: boolean
  readonly all: (params: Record<string, unknown>) => Array<unknown>
  readonly run: (params: Record<string, unknown>) => unknown
}
interface SqliteHandle {
  readonly prepare: (text: string) => SqliteStatement
  readonly exec: (text: string) => void
  readonly pragma: (text: string) => unknown
  readonly close: () => void
}
const Database = createRequire(path.resolve(import.meta.dirname, "../packages/adapters/package.json"))(
  "better-sqlite3"
) as new(file: string) => SqliteHandle

const sqliteDb = (file: string): Db => {
  const db = new Database(file)
  db.pragma("busy_timeout = 30000")
  // The statements are written with Postgres's `$n`; SQLite reads them as the named `$pn`.
  const bind = (params: ReadonlyArray<unknown>) => Object.fromEntries(params.map((p, i) => [`p${i + 1}`, p]))
  const prepare = (text: string) => db.prepare(text.replace(/\$(\d+)/g, "$$p$1"))
  return {
    dialect: "sqlite",
    all: async (text, params = []) => {
      const statement = prepare(text)
      return statement.reader
        ? statement.all(bind(params)) as Array<Record<string, unknown>>
        : (statement.run(bind(params)), [])
    },
    exec: async (text) => void db.exec(text),
    rolledBack: async (text, params = []) => {
      db.exec("BEGIN IMMEDIATE")
      try {
        prepare(text).run(bind(params))
      } finally {
        db.exec("ROLLBACK")
      }
    },
    bytes: async () => {
      db.pragma("wal_checkpoint(TRUNCATE)")
      return fs.statSync(file).size
    },
    close: async () => void db.close()
  }
}

const pgDb = async (url: string): Promise<Db> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  return {
    dialect: "pg",
    all: async (text, params = []) => (await client.query(text, [...params])).rows,
    exec: async (text) => void await client.query(text),
    rolledBack: async (text, params = []) => {
      await client.query("BEGIN")
      try {
        await client.query(text, [...params])
      } finally {
        await client.query("ROLLBACK")
      }
    },
    bytes: async () =>
      Number((await client.query("SELECT pg_database_size(current_database()) AS b")).rows[0]!.b),
    close: () => client.end()
  }
}

// ---------------------------------------------------------------------------------------------------
// Seeding

interface Seeded {
  readonly organizationId: string
  readonly seedSeconds: number
}

/** A UUID-shaped id from a number: `kind` (4 hex digits) tells the seeded rows apart. */
const uuid = (dialect: Db["dialect"], kind: string, expr: string) =>
  dialect === "pg"
    ? `'00000000-0000-4000-${kind}-' || lpad(to_hex(${expr}), 12, '0')`
    : `printf('00000000-0000-4000-${kind}-%012x', ${expr})`

const columnsOf = async (db: Db, table: string): Promise<Array<string>> =>
  db.dialect === "pg"
    ? (await db.all(
      `SELECT column_name AS name FROM information_schema.columns
       WHERE table_name = $1 AND table_schema = current_schema() ORDER BY ordinal_position`,
      [table]
    )).map((r) => String(r.name))
    : (await db.all(`SELECT name FROM pragma_table_info('${table}')`)).map((r) => String(r.name))

/**
 * `INSERT INTO table (cols) SELECT <override or t.col> FROM <from>`: every column of the table,
 * copied from the template row `t` unless overridden. Columns a build adds are copied too, so a
 * newer build's rows keep its shape.
 */
const copyInsert = async (
  db: Db,
  table: string,
  overrides: Record<string, string>,
  from: string,
  skip: ReadonlyArray<string> = []
) => {
  const columns = (await columnsOf(db, table)).filter((c) => !skip.includes(c))
  await db.exec(
    `INSERT INTO ${table} (${columns.join(", ")}) SELECT ${
      columns.map((c) => overrides[c] ?? `t.${c}`).join(", ")
    } FROM ${from}`
  )
}

/**
 * The post kinds by `i % 100`: 0–9 draft, 10–29 scheduled (queued, due in a year), 30–84 published,
 * 85–94 failed, 95–99 partially failed; kinds 7 and 17 pending approval. Even posts have two
 * destinations (partially failed ones always), odd ones one.
 */
const seed = async (db: Db, posts: number, now: number): Promise<Seeded> => {
  const started = performance.now()
  const org = String((await db.all("SELECT organization_id FROM posts LIMIT 1"))[0]!.organization_id)
  const accounts = (await db.all(
    "SELECT id, platform, account_name FROM social_accounts WHERE organization_id = $1 ORDER BY id",
    [org]
  ))
  const n = accounts.length
  const dialect = db.dialect
  const stmt = (text: string) => db.exec(text)
  // A numbers table 1..posts.
  if (dialect === "pg") {
    await stmt(`CREATE TEMP TABLE nums AS SELECT generate_series(1, ${posts}) AS i`)
  } else {
    await stmt("CREATE TEMP TABLE nums (i INTEGER PRIMARY KEY)")
    await stmt(
      `INSERT INTO nums WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ${posts}) SELECT i FROM c`
    )
  }
  await stmt(`CREATE TEMP TABLE accts AS SELECT * FROM (VALUES ${
    accounts.map((a, k) => `(${k}, ${Number(a.id)}, '${String(a.platform)}', '${String(a.account_name).replace(/'/g, "''")}')`)
      .join(", ")
  }) AS v(k, id, platform, account_name)`.replace(
    "AS v(k, id, platform, account_name)",
    dialect === "pg" ? "AS v(k, id, platform, account_name)" : ""
  ))
  if (dialect === "sqlite") {
    await stmt("CREATE TEMP TABLE accts2 AS SELECT column1 AS k, column2 AS id, column3 AS platform, column4 AS account_name FROM accts")
    await stmt("DROP TABLE accts")
    await stmt("ALTER TABLE accts2 RENAME TO accts")
  }
  const tpl = String((await db.all("SELECT id FROM posts ORDER BY created_at LIMIT 1"))[0]!.id)
  const tplDest = String((await db.all("SELECT id FROM destinations LIMIT 1"))[0]!.id)
  const kind = "(n.i % 100)"
  const step = dialect === "pg" ? "CAST(n.i AS BIGINT)" : "n.i"
  const createdAt = `(${now - posts * 60_000} + ${step} * 60000)`
  const dueLater = String(now + 365 * 86_400_000)
  const isDraft = `CASE WHEN ${kind} < 10 THEN 1 ELSE 0 END`
  const contentExpr = `'Bench post ' || n.i || ' about the weekly launch, with a link and a few words of copy'` +
    ` || CASE WHEN n.i % 10007 = 3 THEN ' ${rareWord}' ELSE '' END`
  const acct1 = `(SELECT id FROM accts WHERE k = n.i % ${n})`
  const acct2 = `(SELECT id FROM accts WHERE k = (n.i + 1) % ${n})`
  const accountIds = `CASE WHEN n.i % 2 = 0 OR ${kind} >= 95 THEN '[' || ${acct1} || ',' || ${acct2} || ']' ELSE '[' || ${acct1} || ']' END`
  const begin = dialect === "pg" ? "BEGIN" : "BEGIN IMMEDIATE"
  let lap = performance.now()
  const lapped = (what: string) => {
    if (process.env.BENCH_SCALE_VERBOSE !== undefined) console.log(`    ${what}: ${((performance.now() - lap) / 1000).toFixed(1)} s`)
    lap = performance.now()
  }
  await stmt(begin)
  await copyInsert(db, "posts", {
    id: uuid(dialect, "8001", "n.i"),
    content: contentExpr,
    account_ids: accountIds,
    scheduled_for: `CASE WHEN ${kind} >= 10 AND ${kind} < 30 THEN ${dueLater} ELSE ${createdAt} END`,
    is_draft: isDraft,
    created_status: `CASE WHEN ${kind} < 10 THEN 'draft' ELSE 'scheduled' END`,
    approval: `CASE WHEN ${kind} IN (7, 17) THEN '{"status":"pending","note":null,"consumed":false}' ELSE NULL END`,
    approval_status: `CASE WHEN ${kind} IN (7, 17) THEN 'pending' ELSE NULL END`,
    idempotency_key: "NULL",
    request_hash: "NULL",
    created_at: createdAt,
    updated_at: createdAt
  }, `posts t CROSS JOIN nums n WHERE t.id = '${tpl}'`)
  lapped("posts")
  await copyInsert(db, "post_targets", { post_id: uuid(dialect, "8001", "n.i"), account_id: "a.id" },
    `nums n JOIN accts a ON a.k = n.i % ${n} OR ((n.i % 2 = 0 OR ${kind} >= 95) AND a.k = (n.i + 1) % ${n})
     CROSS JOIN (SELECT * FROM post_targets LIMIT 1) t`)
  lapped("post_targets")
  // Destinations: the first (d.j = 0) and, for even or partially failed posts, a second (d.j = 1).
  const status = `CASE WHEN ${kind} < 30 THEN 'queued' WHEN ${kind} < 85 THEN 'published' WHEN ${kind} < 95 THEN 'failed'
    WHEN d.j = 0 THEN 'published' ELSE 'failed' END`
  const published = `(${kind} >= 30 AND ${kind} < 85) OR (${kind} >= 95 AND d.j = 0)`
  const failed = `(${kind} >= 85 AND ${kind} < 95) OR (${kind} >= 95 AND d.j = 1)`
  await copyInsert(db, "destinations", {
    id: `CASE WHEN ${failed} THEN ${uuid(dialect, "8003", "n.i * 2 + d.j")} ELSE ${uuid(dialect, "8002", "n.i * 2 + d.j")} END`,
    post_id: uuid(dialect, "8001", "n.i"),
    account_id: "a.id",
    platform: "a.platform",
    account_name: "a.account_name",
    status,
    due_at: `CASE WHEN ${kind} < 30 THEN ${dueLater} ELSE ${createdAt} END`,
    attempts: `CASE WHEN ${kind} < 30 THEN 0 WHEN ${failed} THEN 3 ELSE 1 END`,
    error: `CASE WHEN ${failed} THEN 'The platform refused the post (seeded)' ELSE NULL END`,
    platform_post_id: `CASE WHEN ${published} THEN 'p' || n.i || '-' || d.j ELSE NULL END`,
    platform_post_url: `CASE WHEN ${published} THEN 'https://example.com/p/' || n.i || '-' || d.j ELSE NULL END`,
    published_at: `CASE WHEN ${published} THEN ${createdAt} + 1000 ELSE NULL END`,
    failed_at: `CASE WHEN ${failed} THEN ${createdAt} + 1000 ELSE NULL END`,
    metrics: `CASE WHEN ${published} THEN '{"views":' || (n.i % 1000) || ',"likes":' || (n.i % 50) || ',"comments":' ||
      (n.i % 7) || ',"shares":' || (n.i % 5) || ',"impressions":' || (n.i % 2000) || ',"saves":0,"clicks":' || (n.i % 30) || '}'
      ELSE t.metrics END`,
    lease_token: "NULL",
    lease_expires_at: "NULL",
    leased_by: "NULL",
    created_at: createdAt,
    updated_at: createdAt
  }, `nums n CROSS JOIN (SELECT 0 AS j UNION ALL SELECT 1) d
     JOIN accts a ON a.k = (n.i + d.j) % ${n}
     CROSS JOIN (SELECT * FROM destinations WHERE id = '${tplDest}') t
     WHERE ${kind} >= 10 AND (d.j = 0 OR n.i % 2 = 0 OR ${kind} >= 95)`)
  lapped("destinations")
  // Events: every template event, once per post.
  const events = await db.all("SELECT id FROM events WHERE post_id IS NOT NULL ORDER BY created_at LIMIT 6")
  for (const [k, e] of events.entries()) {
    await copyInsert(db, "events", {
      id: uuid(dialect, `9${String(k).padStart(3, "0")}`, "n.i"),
      post_id: uuid(dialect, "8001", "n.i"),
      created_at: createdAt
    }, `nums n CROSS JOIN (SELECT * FROM events WHERE id = '${String(e.id)}') t`, ["seq"])
  }
  lapped("events")
  const deliveries = await db.all("SELECT id FROM webhook_deliveries ORDER BY created_at LIMIT 2")
  for (const [k, d] of deliveries.entries()) {
    await copyInsert(db, "webhook_deliveries", {
      id: uuid(dialect, `a${String(k).padStart(3, "0")}`, "n.i"),
      event_id: uuid(dialect, `9${String(k).padStart(3, "0")}`, "n.i"),
      status: "'delivered'",
      next_attempt_at: "NULL",
      created_at: createdAt,
      updated_at: createdAt
    }, `nums n CROSS JOIN (SELECT * FROM webhook_deliveries WHERE id = '${String(d.id)}') t`, ["seq"])
  }
  await stmt(`INSERT INTO media (id, organization_id, filename, mime_type, size, kind, width, height, duration_ms,
      status, error, storage_key, source_url, created_at, updated_at)
    SELECT ${uuid(dialect, "8004", "n.i")}, '${org}', 'photo-' || n.i || '.jpg', 'image/jpeg', 250000 + n.i, 'image',
      1080, 1080, NULL, 'ready', NULL, 'bench/' || n.i, NULL, ${createdAt}, ${createdAt}
    FROM nums n WHERE n.i % 3 = 0`)
  lapped("deliveries, media")
  await stmt("COMMIT")
  lapped("commit")
  await stmt(dialect === "pg" ? "ANALYZE" : "ANALYZE")
  lapped("analyze")
  await stmt("DROP TABLE nums")
  await stmt("DROP TABLE accts")
  return { organizationId: org, seedSeconds: (performance.now() - started) / 1000 }
}

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

interface Read {
  readonly name: string
  readonly http: { readonly method: "GET" | "POST"; readonly path: string; readonly body?: unknown }
  /** The hand-written statements that give the same answer (run one after another). */
  readonly sql: (org: string, now: number) => ReadonlyArray<{ readonly text: string; readonly params: ReadonlyArray<unknown>; readonly write?: boolean }>
  readonly resets?: boolean
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
  const page = `SELECT p.* FROM posts p WHERE p.organization_id = $1 ${where} ORDER BY p.created_at DESC, p.id DESC LIMIT 20`
  return [
    { text: page, params: ["org"] },
    { text: pageDestinations(page), params: ["org"] },
    { text: `SELECT COUNT(*) AS c FROM posts p WHERE p.organization_id = $1 ${where}`, params: ["org"] }
  ]
}

const onlyFailed = `AND p.is_draft = 0 AND EXISTS (SELECT 1 FROM destinations d WHERE d.post_id = p.id AND d.status = 'failed')
  AND NOT EXISTS (SELECT 1 FROM destinations d WHERE d.post_id = p.id AND d.status <> 'failed')`

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
    { name: "GET /posts?status=failed", http: { method: "GET", path: "/posts?status=failed" }, sql: org(listed(onlyFailed)) },
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
        { text: `SELECT s, COUNT(*) AS c FROM (SELECT ${derived} AS s FROM posts p WHERE p.organization_id = $1) x GROUP BY s`, params: [o] },
        { text: "SELECT COALESCE(SUM(size), 0) AS b FROM media WHERE organization_id = $1", params: [o] }
      ]
    },
    {
      name: "GET /analytics/summary?period=all",
      http: { method: "GET", path: "/analytics/summary?period=all" },
      sql: (o) => [
        { text: `SELECT s, COUNT(*) AS c FROM (SELECT ${derived} AS s FROM posts p WHERE p.organization_id = $1) x GROUP BY s`, params: [o] },
        {
          text: `SELECT d.platform, d.status, COUNT(*) AS c, ${
            ["views", "likes", "comments", "shares", "impressions", "saves", "clicks"].map(metric).join(", ")
          } FROM destinations d WHERE d.organization_id = $1 GROUP BY d.platform, d.status`,
          params: [o]
        }
      ]
    },
    {
      name: `POST /posts/retry-failed (platform=${retryPlatform})`,
      http: { method: "POST", path: "/posts/retry-failed", body: { platform: retryPlatform } },
      resets: true,
      sql: (o, now) => [{
        text: `UPDATE destinations SET status = 'queued', due_at = $2, error = NULL, updated_at = $2
          WHERE id IN (SELECT d.id FROM destinations d JOIN posts p ON p.id = d.post_id
            WHERE d.organization_id = $1 AND d.status = 'failed' AND d.platform = '${retryPlatform}'
            ORDER BY p.created_at, d.id LIMIT 500)`,
        params: [o, now],
        write: true
      }]
    }
  ]
}

/** Seeded failed destinations back to failed (between retry samples; not timed), once the dispatcher is done. */
const resetFailed = async (db: Db) => {
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    const busy = await db.all(
      "SELECT COUNT(*) AS c FROM destinations WHERE status IN ('queued', 'publishing') AND due_at < $1",
      [Date.now() + 86400000]
    )
    if (Number(busy[0]!.c) === 0) break
    await HeraldServer.sleep(100)
  }
  await db.exec(`UPDATE destinations SET status = 'failed', error = 'The platform refused the post (seeded)',
      attempts = 3, platform_post_id = NULL, platform_post_url = NULL, published_at = NULL
    WHERE id LIKE '00000000-0000-4000-8003-%' AND status <> 'failed'`)
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
const send = (url: string, init: { readonly method: string; readonly headers?: Record<string, string>; readonly body?: string }) =>
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

const prepareTemplates = async (server: HeraldServer.HeraldServer) => {
  const headers = { authorization: `Bearer ${server.key}`, "content-type": "application/json" }
  await fetch(`${server.base}/webhooks`, {
    method: "POST",
    headers,
    body: JSON.stringify({ url: "http://127.0.0.1:9/bench", events: ["post.published", "post.failed", "post.created"] })
  }).then((r) => r.text())
  const account = await HeraldServer.draftAccount(server.base, server.key)
  const created = await fetch(`${server.base}/posts`, {
    method: "POST",
    headers,
    body: JSON.stringify({ content: "template", account_ids: [account.id] })
  })
  if (!created.ok) throw new Error(`template post: ${created.status} ${await created.text()}`)
  // The sandbox publishes it: its destination and events are the templates.
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    const body = await (await fetch(`${server.base}/posts`, { headers })).json() as { data: { posts: Array<{ status: string }> } }
    if (body.data.posts[0]?.status === "published") break
    await HeraldServer.sleep(100)
  }
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
      console.log(`  seeded ${options.size} posts in ${seeded.seedSeconds.toFixed(1)} s (${(bytes / 2 ** 20).toFixed(0)} MiB)`)
      const t0 = performance.now()
      const server = await HeraldServer.start({ dataDir, env, repoRoot: options.root, key: first.key })
      const startSeconds = (performance.now() - t0) / 1000
      try {
        const measured: Array<Measured> = []
        for (const read of reads(db.dialect)) {
          await request(server, read) // warm
          const api = await sample(() => request(server, read), read.resets ? () => resetFailed(db) : undefined)
          const statements = read.sql(seeded.organizationId, Date.now())
          const sqlFigure = await sample(async () => {
            for (const s of statements) {
              if (s.write === true) await db.rolledBack(s.text, s.params)
              else await db.all(s.text, s.params)
            }
          })
          measured.push({ name: read.name, api, sql: sqlFigure })
          console.log(
            `  ${read.name.padEnd(44)} api p50 ${api.p50.toFixed(1).padStart(8)} p99 ${api.p99.toFixed(1).padStart(8)}` +
              ` | sql p50 ${sqlFigure.p50.toFixed(1).padStart(7)} | x${(api.p50 / sqlFigure.p50).toFixed(1)}`
          )
        }
        const slowest = reads(db.dialect).filter((r) => r.resets !== true).reduce((a, b) =>
          (measured.find((m) => m.name === a.name)!.api.p50 >= measured.find((m) => m.name === b.name)!.api.p50 ? a : b)
        )
        const stall = await stallDuring(server, slowest)
        console.log(`  /health/live longest wait ${stall.liveMaxMs.toFixed(1)} ms while ${stall.read} (${stall.requestMs.toFixed(0)} ms) ran`)
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
      lines.push(`| read | ${mine.map((r) => `${r.size} posts: api p50 / p99 | sql p50 | ratio`).join(" | ")} | growth |`)
      lines.push(`|---|${mine.map(() => "---|---|---|").join("")}---|`)
      for (const name of mine[0]!.reads.map((m) => m.name)) {
        const cells = mine.map((r) => {
          const m = r.reads.find((x) => x.name === name)!
          return `${fmt(m.api.p50)} / ${fmt(m.api.p99)} | ${fmt(m.sql.p50)} | ${(m.api.p50 / m.sql.p50).toFixed(1)}×`
        })
        const growth = mine.slice(1).map((r, k) =>
          `${(r.reads.find((x) => x.name === name)!.api.p50 / mine[k]!.reads.find((x) => x.name === name)!.api.p50).toFixed(1)}×`
        ).join(", ")
        lines.push(`| ${name} | ${cells.join(" | ")} | ${growth || "—"} |`)
      }
      for (const r of mine) {
        lines.push(
          `\n${r.size} posts: /health/live waited at most ${fmt(r.stall.liveMaxMs)} while ${r.stall.read} ran ` +
            `(${fmt(r.stall.requestMs)}); store ${(r.bytes / 2 ** 20).toFixed(0)} MiB ` +
            `(${(r.bytes / r.size * 1e5 / 2 ** 20).toFixed(0)} MiB per 100k posts); seeded in ${r.seedSeconds.toFixed(1)} s; ` +
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
    { name: "this build", root: path.resolve(import.meta.dirname, "..") }
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
