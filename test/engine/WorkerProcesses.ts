/**
 * Worker processes against one database, for the multi-process test and the benchmarks: spawning
 * them, seeding due work, and reading back what happened (store rows, events, the sandbox's sends).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as NodeIdGenerator from "@herald/adapters/NodeIdGenerator"
import * as Sandbox from "@herald/adapters/platforms/Sandbox"
import * as SqlDatabase from "@herald/adapters/sql/SqlDatabase"
import * as SqlStores from "@herald/adapters/sql/SqlStores"
import type { SocialAccount } from "@herald/core/domain/Account"
import { Destination } from "@herald/core/domain/Destination"
import { IdGenerator } from "@herald/core/kernel/IdGenerator"
import { DestinationId, OrganizationId, PostId } from "@herald/core/kernel/Ids"
import { Organization } from "@herald/core/access/Organization"
import { OrganizationStore } from "@herald/core/access/OrganizationStore"
import type { Platform } from "@herald/core/domain/Platform"
import { type PlatformContent, PlatformContentEntry, Post } from "@herald/core/domain/Post"
import { type PostRecord, PostStore } from "@herald/core/posts/PostStore"
import { Transactor } from "@herald/core/kernel/Transactor"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { type ChildProcess, spawn } from "node:child_process"
import { bin } from "../support/HeraldBin.js"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"

export const repoRoot = path.resolve(import.meta.dirname, "../..")

/** The servers' own ids (time-ordered), so that seeded rows sit in their indexes as the API's would. */
export const layerIds: Layer.Layer<IdGenerator> = NodeIdGenerator.layer

export type StoresServices = SqlStores.Stores | SqlClient.SqlClient | IdGenerator

/** The stores over a database URL (Postgres) or file (SQLite), migrated. */
export const storesLayer = (database: SqlDatabase.DatabaseConfig): Layer.Layer<StoresServices> =>
  SqlStores.layer.pipe(
    Layer.provideMerge(layerIds),
    Layer.provideMerge(SqlDatabase.layer(database)),
    Layer.orDie
  )

export interface Seeded {
  readonly organizationId: OrganizationId
  readonly posts: number
  readonly destinations: number
  /** Posts whose first destination carries `[sandbox:fail]` (they end partially failed). */
  readonly mixedPosts: ReadonlyArray<string>
}

export interface SeedOptions {
  readonly posts: number
  /** Destinations per post, on these platforms (sandbox accounts). */
  readonly platforms: ReadonlyArray<Platform>
  /** Every n-th post fails on its first platform; 0 for none. */
  readonly failEvery?: number
  /** Due instant; default now. */
  readonly dueAt?: DateTime.Utc
  /** Posts per transaction. */
  readonly chunk?: number
}

/** An organization with the sandbox accounts, and due posts with one destination per platform. */
export const seed = (options: SeedOptions) =>
  Effect.gen(function*() {
    const orgs = yield* OrganizationStore
    const posts = yield* PostStore
    const transactor = yield* Transactor
    const now = yield* DateTime.now
    const organizationId = OrganizationId.make(crypto.randomUUID())
    yield* orgs.insert(
      new Organization({
        id: organizationId,
        name: "Bench org",
        plan: "scale",
        subscriptionStatus: "active",
        trialEndsAt: Option.none(),
        createdAt: now
      })
    )
    const accounts = new Map<Platform, SocialAccount>()
    for (const account of yield* Sandbox.bootstrapAccounts(organizationId)) accounts.set(account.platform, account)
    const dueAt = options.dueAt ?? now
    const mixedPosts: Array<string> = []
    const records: Array<PostRecord> = []
    const ids = yield* IdGenerator
    for (let i = 0; i < options.posts; i++) {
      const mixed = options.failEvery !== undefined && options.failEvery > 0 && i % options.failEvery === 0
      const newIds = yield* Effect.replicateEffect(ids.uuid, 1 + options.platforms.length)
      const record = makeRecord(organizationId, options.platforms.map((p) => accounts.get(p)!), newIds, {
        content: `bench post ${i}`,
        dueAt,
        now,
        ...(mixed ? { failOn: options.platforms[0]! } : {})
      })
      if (mixed) mixedPosts.push(record.post.id)
      records.push(record)
    }
    const chunk = options.chunk ?? 200
    for (let i = 0; i < records.length; i += chunk) {
      yield* transactor.withTransaction(Effect.forEach(records.slice(i, i + chunk), posts.insert, { discard: true }))
    }
    return {
      organizationId,
      posts: records.length,
      destinations: records.length * options.platforms.length,
      mixedPosts
    } satisfies Seeded
  })

const makeRecord = (
  organizationId: OrganizationId,
  accounts: ReadonlyArray<SocialAccount>,
  ids: ReadonlyArray<string>,
  input: { content: string; dueAt: DateTime.Utc; now: DateTime.Utc; failOn?: Platform }
): PostRecord => {
  const postId = PostId.make(ids[0]!)
  const platformContent: PlatformContent = input.failOn === undefined
    ? {}
    : { [input.failOn]: new PlatformContentEntry({ content: `${input.content} ${Sandbox.markers.fail}` }) }
  const scheduled = DateTime.greaterThan(input.dueAt, input.now)
  const post = new Post({
    id: postId,
    organizationId,
    createdByKey: Option.none(),
    content: input.content,
    accountIds: accounts.map((a) => a.id),
    platformContent,
    mediaIds: [],
    scheduledFor: scheduled ? Option.some(input.dueAt) : Option.none(),
    timezone: Option.none(),
    campaignId: Option.none(),
    isDraft: false,
    createdStatus: scheduled ? "scheduled" : "publishing",
    approval: Option.none(),
    idempotencyKey: Option.none(),
    requestHash: Option.none(),
    threadPosts: [],
    useQueue: false,
    createdAt: input.now,
    updatedAt: input.now
  })
  const destinations = accounts.map((account, i) =>
    Destination.queued({
      id: DestinationId.make(ids[1 + i]!),
      post: { id: postId, organizationId },
      account,
      dueAt: input.dueAt,
      now: input.now
    })
  )
  return { post, destinations }
}

export interface WorkerProcess {
  readonly child: ChildProcess
  readonly journal: string
  readonly exited: Promise<number | null>
  readonly output: () => string
}

/** `herald worker`, through the bundle of the sources the suite builds once (HeraldBin.ts). */
export const workerCommand = (): { readonly command: string; readonly args: ReadonlyArray<string> } => ({
  command: process.execPath,
  args: [bin, "worker"]
})

export const spawnWorker = (options: {
  readonly database: { readonly url: string } | { readonly file: string }
  readonly journal: string
  readonly args?: ReadonlyArray<string>
  readonly latencyMs?: number
  /** More environment for the worker (e.g. HERALD_SANDBOX_LEDGER). */
  readonly env?: NodeJS.ProcessEnv
  /** Publish through the sandbox (default) or through the real platform clients (endpoints from `env`). */
  readonly sandbox?: boolean
}): WorkerProcess => {
  const { args, command } = workerCommand()
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HERALD_SANDBOX_JOURNAL: options.journal,
    HERALD_SANDBOX_LATENCY_MS: String(options.latencyMs ?? 0),
    HERALD_LOG_LEVEL: "warning",
    ...options.env
  }
  if ("url" in options.database) {
    env.HERALD_DATABASE_URL = options.database.url
    env.DATABASE_URL = options.database.url
  } else {
    env.HERALD_SQLITE_FILE = options.database.file
  }
  const child = spawn(
    command,
    [...args, ...(options.sandbox === false ? [] : ["--sandbox"]), ...(options.args ?? [])],
    {
      cwd: repoRoot,
      env,
      stdio: ["ignore", "pipe", "pipe"]
    }
  )
  let output = ""
  child.stdout?.on("data", (chunk) => {
    output = (output + String(chunk)).slice(-20_000)
  })
  child.stderr?.on("data", (chunk) => {
    output = (output + String(chunk)).slice(-20_000)
  })
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  return { child, journal: options.journal, exited, output: () => output }
}

export interface JournalEntry {
  readonly platform: Platform
  readonly destinationId: string
  readonly attempt: number
  readonly at: number
  readonly outcome: string
  readonly platformPostId?: string
}

export const readJournal = (file: string): ReadonlyArray<JournalEntry> => {
  if (!fs.existsSync(file)) return []
  return fs.readFileSync(file, "utf8").split("\n").filter((l) => l.length > 0).flatMap((line) => {
    try {
      return [JSON.parse(line) as JournalEntry]
    } catch {
      // The last line of a killed process may be cut short: it was not a whole send record.
      return []
    }
  })
}

export const countLines = (file: string): number =>
  fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").length - 1 : 0

/** Destination statuses by count. */
export const statusCounts = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<
    { status: string; n: number | string }
  >`SELECT status, COUNT(*) AS n FROM destinations GROUP BY status`
  const out: Record<string, number> = {}
  for (const row of rows) out[row.status] = Number(row.n)
  return out
})

export interface DestinationRow {
  readonly id: string
  readonly post_id: string
  readonly status: string
  readonly error: string | null
  readonly platform_post_id: string | null
  readonly attempts: number
  readonly due_at: number | string
}

export const destinations = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return yield* sql<
    DestinationRow
  >`SELECT id, post_id, status, error, platform_post_id, attempts, due_at FROM destinations`
})

export interface EventRow {
  readonly type: string
  readonly data: Record<string, unknown>
}

export const events = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ type: string; data: string }>`SELECT type, data FROM events`
  return rows.map((row): EventRow => ({ type: row.type, data: JSON.parse(row.data) as Record<string, unknown> }))
})

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
