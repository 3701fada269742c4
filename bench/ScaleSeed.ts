/**
 * The scale benches' store: one dialect-neutral handle on a SQLite file or a Postgres database, and
 * the bulk seeding of a year of posts in Herald's own row shapes (copied from template rows a server
 * created through the API), shared by `bench/Scale.ts` and the other scale measurements.
 */
import { createRequire } from "node:module"
import * as fs from "node:fs"
import * as path from "node:path"
import pg from "pg"

/** A word in one post of every 10,007: the rare-word search. */
export const rareWord = "quetzal"

// One dialect-neutral handle on the store the bench seeds and queries beside the server.

export interface Db {
  readonly dialect: "sqlite" | "pg"
  readonly all: (text: string, params?: ReadonlyArray<unknown>) => Promise<Array<Record<string, unknown>>>
  readonly exec: (text: string) => Promise<void>
  /** `text` inside a transaction that is rolled back (a write measured without keeping it). */
  readonly rolledBack: (text: string, params?: ReadonlyArray<unknown>) => Promise<void>
  readonly bytes: () => Promise<number>
  readonly close: () => Promise<void>
}

/** The few calls of better-sqlite3 (a dependency of the adapters, without type declarations) used here. */
export interface SqliteStatement {
  readonly reader: boolean
  readonly all: (params: Record<string, unknown>) => Array<unknown>
  readonly run: (params: Record<string, unknown>) => unknown
}
export interface SqliteHandle {
  readonly prepare: (text: string) => SqliteStatement
  readonly exec: (text: string) => void
  readonly pragma: (text: string) => unknown
  readonly close: () => void
}
export const Database = createRequire(path.resolve(import.meta.dirname, "../packages/adapters/package.json"))(
  "better-sqlite3"
) as new(file: string) => SqliteHandle

export const sqliteDb = (file: string): Db => {
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

export const pgDb = async (url: string): Promise<Db> => {
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
    bytes: async () => Number((await client.query("SELECT pg_database_size(current_database()) AS b")).rows[0]!.b),
    close: () => client.end()
  }
}

// ---------------------------------------------------------------------------------------------------
// Seeding

export interface Seeded {
  readonly organizationId: string
  readonly seedSeconds: number
}

/** A UUID-shaped id from a number: `kind` (4 hex digits) tells the seeded rows apart. */
export const uuid = (dialect: Db["dialect"], kind: string, expr: string) =>
  dialect === "pg"
    ? `'00000000-0000-4000-${kind}-' || lpad(to_hex(${expr}), 12, '0')`
    : `printf('00000000-0000-4000-${kind}-%012x', ${expr})`

export const columnsOf = async (db: Db, table: string): Promise<Array<string>> =>
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
export const copyInsert = async (
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
export const seed = async (db: Db, posts: number, now: number): Promise<Seeded> => {
  const started = performance.now()
  const org = String((await db.all("SELECT organization_id FROM posts LIMIT 1"))[0]!.organization_id)
  const accounts = await db.all(
    "SELECT id, platform, account_name FROM social_accounts WHERE organization_id = $1 ORDER BY id",
    [org]
  )
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
  await stmt(
    `CREATE TEMP TABLE accts AS SELECT * FROM (VALUES ${
      accounts.map((a, k) =>
        `(${k}, ${Number(a.id)}, '${String(a.platform)}', '${String(a.account_name).replace(/'/g, "''")}')`
      )
        .join(", ")
    }) AS v(k, id, platform, account_name)`.replace(
      "AS v(k, id, platform, account_name)",
      dialect === "pg" ? "AS v(k, id, platform, account_name)" : ""
    )
  )
  if (dialect === "sqlite") {
    await stmt(
      "CREATE TEMP TABLE accts2 AS SELECT column1 AS k, column2 AS id, column3 AS platform, column4 AS account_name FROM accts"
    )
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
  const accountIds =
    `CASE WHEN n.i % 2 = 0 OR ${kind} >= 95 THEN '[' || ${acct1} || ',' || ${acct2} || ']' ELSE '[' || ${acct1} || ']' END`
  const begin = dialect === "pg" ? "BEGIN" : "BEGIN IMMEDIATE"
  let lap = performance.now()
  const lapped = (what: string) => {
    if (process.env.BENCH_SCALE_VERBOSE !== undefined) {
      console.log(`    ${what}: ${((performance.now() - lap) / 1000).toFixed(1)} s`)
    }
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
  await copyInsert(
    db,
    "post_targets",
    { post_id: uuid(dialect, "8001", "n.i"), account_id: "a.id" },
    `nums n JOIN accts a ON a.k = n.i % ${n} OR ((n.i % 2 = 0 OR ${kind} >= 95) AND a.k = (n.i + 1) % ${n})
     CROSS JOIN (SELECT * FROM post_targets LIMIT 1) t`
  )
  lapped("post_targets")
  // Destinations: the first (d.j = 0) and, for even or partially failed posts, a second (d.j = 1).
  const status =
    `CASE WHEN ${kind} < 30 THEN 'queued' WHEN ${kind} < 85 THEN 'published' WHEN ${kind} < 95 THEN 'failed'
    WHEN d.j = 0 THEN 'published' ELSE 'failed' END`
  const published = `(${kind} >= 30 AND ${kind} < 85) OR (${kind} >= 95 AND d.j = 0)`
  const failed = `(${kind} >= 85 AND ${kind} < 95) OR (${kind} >= 95 AND d.j = 1)`
  await copyInsert(
    db,
    "destinations",
    {
      id: `CASE WHEN ${failed} THEN ${uuid(dialect, "8003", "n.i * 2 + d.j")} ELSE ${
        uuid(dialect, "8002", "n.i * 2 + d.j")
      } END`,
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
      metrics:
        `CASE WHEN ${published} THEN '{"views":' || (n.i % 1000) || ',"likes":' || (n.i % 50) || ',"comments":' ||
      (n.i % 7) || ',"shares":' || (n.i % 5) || ',"impressions":' || (n.i % 2000) || ',"saves":0,"clicks":' || (n.i % 30) || '}'
      ELSE t.metrics END`,
      lease_token: "NULL",
      lease_expires_at: "NULL",
      leased_by: "NULL",
      created_at: createdAt,
      updated_at: createdAt
    },
    `nums n CROSS JOIN (SELECT 0 AS j UNION ALL SELECT 1) d
     JOIN accts a ON a.k = (n.i + d.j) % ${n}
     CROSS JOIN (SELECT * FROM destinations WHERE id = '${tplDest}') t
     WHERE ${kind} >= 10 AND (d.j = 0 OR n.i % 2 = 0 OR ${kind} >= 95)`
  )
  lapped("destinations")
  // Events: every template event, once per post.
  const events = await db.all("SELECT id FROM events WHERE post_id IS NOT NULL ORDER BY created_at LIMIT 6")
  for (const [k, e] of events.entries()) {
    await copyInsert(
      db,
      "events",
      {
        id: uuid(dialect, `9${String(k).padStart(3, "0")}`, "n.i"),
        post_id: uuid(dialect, "8001", "n.i"),
        created_at: createdAt
      },
      `nums n CROSS JOIN (SELECT * FROM events WHERE id = '${String(e.id)}') t`,
      ["seq"]
    )
  }
  lapped("events")
  const deliveries = await db.all("SELECT id FROM webhook_deliveries ORDER BY created_at LIMIT 2")
  for (const [k, d] of deliveries.entries()) {
    await copyInsert(
      db,
      "webhook_deliveries",
      {
        id: uuid(dialect, `a${String(k).padStart(3, "0")}`, "n.i"),
        event_id: uuid(dialect, `9${String(k).padStart(3, "0")}`, "n.i"),
        status: "'delivered'",
        next_attempt_at: "NULL",
        created_at: createdAt,
        updated_at: createdAt
      },
      `nums n CROSS JOIN (SELECT * FROM webhook_deliveries WHERE id = '${String(d.id)}') t`,
      ["seq"]
    )
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

/** Seeded failed destinations back to failed (between retry samples; not timed), once the dispatcher is done. */
export const resetFailed = async (db: Db) => {
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    const busy = await db.all(
      "SELECT COUNT(*) AS c FROM destinations WHERE status IN ('queued', 'publishing') AND due_at < $1",
      [Date.now() + 86400000]
    )
    if (Number(busy[0]!.c) === 0) break
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  await db.exec(`UPDATE destinations SET status = 'failed', error = 'The platform refused the post (seeded)',
      attempts = 3, platform_post_id = NULL, platform_post_url = NULL, published_at = NULL
    WHERE id LIKE '00000000-0000-4000-8003-%' AND status <> 'failed'`)
}
