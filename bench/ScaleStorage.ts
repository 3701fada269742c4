/**
 * `npx tsx bench/ScaleStorage.ts`: bytes per 100k posts of a filled store, before and after a round of
 * housekeeping, for this build and (with `--baseline DIR`) another checkout's build, side by side in
 * one run.
 *
 * Per build and store: a `herald serve --sandbox` migrates a fresh store and creates the template rows
 * through the API (a webhook, a post the sandbox publishes); it stops; `ScaleSeed.seed` fills the store
 * with `--size` posts in Herald's own row shapes (created one a minute up to now, so 100k posts span
 * 69 days), and the usage counters that traffic leaves are added in Herald's key shapes (a posting
 * allowance window per minute, hour and day; a settlement lock row per post with two destinations; a
 * breaker mark per failed post). The store is measured (live bytes: SQLite pages in use, Postgres
 * after VACUUM FULL), the server starts again with housekeeping every few seconds until the rows it
 * prunes stop changing, and the store is measured again.
 *
 *   npx tsx bench/ScaleStorage.ts -- [--size 100000] [--stores sqlite,pg] [--baseline /work/main]
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { createFreshPgDatabase } from "../packages/adapters/test/support/TestDatabases.js"
import * as HeraldServer from "./HeraldServer.js"
import { type Db, pgDb, seed, sqliteDb } from "./ScaleSeed.js"
import { prepareTemplates } from "./ScaleTemplates.js"

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? undefined : process.argv[i + 1]
}

const size = Number(arg("size") ?? "100000")
const stores = (arg("stores") ?? "sqlite,pg").split(",") as Array<"sqlite" | "pg">
const baseline = arg("baseline")
const tables = ["posts", "destinations", "events", "webhook_deliveries", "webhook_attempts", "usage_counters", "media"]

/** The usage counters a year of traffic leaves, in the keys Herald writes (see the file comment). */
const seedCounters = async (db: Db, organizationId: string, posts: number, now: number) => {
  const step = db.dialect === "pg" ? "CAST(i AS BIGINT)" : "i"
  const nums = db.dialect === "pg"
    ? `generate_series(1, ${posts}) AS n(i)`
    : `(WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ${posts}) SELECT i FROM c) n`
  const createdAt = `(${now - posts * 60_000} + ${step} * 60000)`
  const ceil = (unit: number) => `((${createdAt} / ${unit}) * ${unit} + ${unit})`
  const subject = `'posting:scheduled:org:${organizationId}'`
  await db.exec(db.dialect === "pg" ? "BEGIN" : "BEGIN IMMEDIATE")
  await db.exec(`INSERT INTO usage_counters (key, window_end, count)
    SELECT ${subject} || ':minute', ${ceil(60_000)}, 1 FROM ${nums}`)
  await db.exec(`INSERT INTO usage_counters (key, window_end, count)
    SELECT ${subject} || ':hour', ${ceil(3_600_000)}, 60 FROM ${nums} WHERE i % 60 = 0`)
  await db.exec(`INSERT INTO usage_counters (key, window_end, count)
    SELECT ${subject} || ':day', ${ceil(86_400_000)}, 1440 FROM ${nums} WHERE i % 1440 = 0`)
  const postId = db.dialect === "pg"
    ? `'00000000-0000-4000-8001-' || lpad(to_hex(i), 12, '0')`
    : `printf('00000000-0000-4000-8001-%012x', i)`
  await db.exec(`INSERT INTO usage_counters (key, window_end, count)
    SELECT 'dispatch:settle:' || ${postId}, 0, 1 FROM ${nums} WHERE i % 100 >= 30 AND (i % 2 = 0 OR i % 100 >= 95)`)
  await db.exec(`INSERT INTO usage_counters (key, window_end, count)
    SELECT 'breaker:counted:' || ${postId}, ${createdAt} + ${7 * 86_400_000}, 1 FROM ${nums} WHERE i % 100 >= 85`)
  await db.exec("COMMIT")
}

const counts = async (db: Db): Promise<Record<string, number>> => {
  const out: Record<string, number> = {}
  for (const t of tables) out[t] = Number((await db.all(`SELECT COUNT(*) AS n FROM ${t}`))[0]!.n)
  return out
}

/** Bytes the data takes: SQLite pages in use; Postgres after VACUUM FULL (what a compacted store holds). */
const liveBytes = async (db: Db): Promise<number> => {
  if (db.dialect === "pg") {
    await db.exec("VACUUM FULL")
    return db.bytes()
  }
  await db.bytes() // checkpoints the WAL into the file
  const pages = Number((await db.all("PRAGMA page_count"))[0]!.page_count)
  const free = Number((await db.all("PRAGMA freelist_count"))[0]!.freelist_count)
  const pageSize = Number((await db.all("PRAGMA page_size"))[0]!.page_size)
  return (pages - free) * pageSize
}

/** Bytes per table and index, largest first (SQLite: the dbstat virtual table). */
const breakdown = async (db: Db): Promise<Array<[string, number]>> => {
  if (db.dialect === "pg") {
    const rows = await db.all(`SELECT relname AS name, pg_relation_size(c.oid) AS bytes FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'i', 't')
      ORDER BY 2 DESC`)
    return rows.map((r) => [String(r.name), Number(r.bytes)])
  }
  const rows = await db.all("SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY 2 DESC")
  return rows.map((r) => [String(r.name), Number(r.bytes)])
}

interface Measured {
  readonly build: string
  readonly store: string
  readonly before: number
  readonly after: number
  readonly rowsBefore: Record<string, number>
  readonly rowsAfter: Record<string, number>
}

const runOne = async (build: string, root: string, store: "sqlite" | "pg"): Promise<Measured> => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-storage-"))
  const pgDatabase = store === "pg" ? await Effect.runPromise(createFreshPgDatabase()) : undefined
  const env: Record<string, string> = pgDatabase === undefined ? {} : { HERALD_DATABASE_URL: pgDatabase.url }
  try {
    // Private addresses allowed for the template webhook (127.0.0.1), so its deliveries are templates too.
    const first = await HeraldServer.start({
      dataDir,
      env: { ...env, HERALD_WEBHOOKS_ALLOW_PRIVATE: "true" },
      repoRoot: root
    })
    await prepareTemplates(first)
    await first.stop()
    const open = () =>
      pgDatabase === undefined ? Promise.resolve(sqliteDb(path.join(dataDir, "herald.db"))) : pgDb(pgDatabase.url)
    let db = await open()
    const now = Date.now()
    const seeded = await seed(db, size, now)
    await seedCounters(db, seeded.organizationId, size, now)
    const rowsBefore = await counts(db)
    const before = await liveBytes(db)
    const tablesBefore = await breakdown(db)
    console.log(
      `  ${build} ${store}: seeded in ${seeded.seedSeconds.toFixed(1)} s, ${(before / 2 ** 20).toFixed(1)} MiB`
    )
    await db.close()
    // Housekeeping every ~3 s, in large statements, until a minute passes or the counts settle.
    const server = await HeraldServer.start({
      dataDir,
      env: { ...env, HERALD_HOUSEKEEPING_MINUTES: "0.05", HERALD_HOUSEKEEPING_BATCH: "2000" },
      repoRoot: root,
      key: first.key
    })
    db = await open()
    try {
      let last = JSON.stringify(await counts(db))
      let stableSince = Date.now()
      const deadline = Date.now() + 180_000
      while (Date.now() < deadline && Date.now() - stableSince < 12_000) {
        await HeraldServer.sleep(2000)
        const now = JSON.stringify(await counts(db))
        if (now !== last) {
          last = now
          stableSince = Date.now()
        }
      }
    } finally {
      await server.stop()
    }
    const rowsAfter = await counts(db)
    const after = await liveBytes(db)
    const tablesAfter = await breakdown(db)
    await db.close()
    const mib = (b: number) => `${(b / size * 1e5 / 2 ** 20).toFixed(1)}`
    console.log(`  ${build} ${store}: MiB per 100k posts by table/index, seeded → after housekeeping:`)
    for (const [name, bytes] of tablesBefore.slice(0, 16)) {
      console.log(
        `    ${name.padEnd(40)} ${mib(bytes).padStart(8)} → ${
          mib(tablesAfter.find(([n]) => n === name)?.[1] ?? 0).padStart(8)
        }`
      )
    }
    console.log(`  ${build} ${store}: after housekeeping ${(after / 2 ** 20).toFixed(1)} MiB`)
    return { build, store, before, after, rowsBefore, rowsAfter }
  } finally {
    if (pgDatabase !== undefined) await Effect.runPromise(pgDatabase.drop)
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

const perHundredK = (bytes: number) => `${(bytes / size * 1e5 / 2 ** 20).toFixed(1)} MiB`
const perPost = (rows: number) => (rows / size).toFixed(2)

const main = async () => {
  const builds: Array<[string, string]> = [
    ...(baseline === undefined ? [] : [["baseline", baseline] as [string, string]]),
    ["this", path.resolve(import.meta.dirname, "..")]
  ]
  const results: Array<Measured> = []
  for (const store of stores) {
    for (const [build, root] of builds) results.push(await runOne(build, root, store))
  }
  console.log(`\n### Storage per 100k posts (${size} posts seeded, created one a minute up to now)\n`)
  console.log(`| store | build | seeded | after housekeeping | ${tables.map((t) => `${t} rows/post`).join(" | ")} |`)
  console.log(`|---|---|---|---|${tables.map(() => "---|").join("")}`)
  for (const r of results) {
    console.log(
      `| ${r.store} | ${r.build} | ${perHundredK(r.before)} | ${perHundredK(r.after)} | ` +
        tables.map((t) => `${perPost(r.rowsBefore[t]!)} → ${perPost(r.rowsAfter[t]!)}`).join(" | ") + " |"
    )
  }
  for (const store of stores) {
    const base = results.find((r) => r.store === store && r.build === "baseline")
    const mine = results.find((r) => r.store === store && r.build === "this")
    if (base !== undefined && mine !== undefined) {
      console.log(
        `\n${store}: after housekeeping this build keeps ${
          (mine.after / base.after * 100).toFixed(0)
        } % of the baseline's bytes`
      )
    }
  }
}

await main()
