/**
 * The request path side by side, over real HTTP with 32 keep-alive
 * connections from this process:
 * (a) `POST /posts` (a draft for one account: post + target row, one transaction) on
 *     `herald serve --sandbox` against the hand-written node:http + better-sqlite3 peer
 *     (bench/peers/create-peer.mjs) on a copy of the same database; both `synchronous = FULL`;
 * (c) authenticated `GET /accounts` against the same peer answering Herald's JSON byte for byte;
 * (e) resident memory of both processes when idle and after each load.
 * The loads alternate between Herald and the peer (`rounds` times) so that other work on the
 * machine hits both alike; figures are the mean over rounds.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as HeraldServer from "./HeraldServer.js"
import * as Load from "./Load.js"
import * as RequestPathPg from "./RequestPathPg.js"

export interface Side {
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly failures: Record<string, number>
}

export interface Result {
  readonly posts: { readonly herald: Side; readonly peer: Side }
  readonly accounts: { readonly herald: Side; readonly peer: Side }
  /** MiB, in order: idle, after (a), after (c). */
  readonly rss: { readonly herald: ReadonlyArray<number>; readonly peer: ReadonlyArray<number> }
  readonly connections: number
  readonly seconds: number
  readonly rounds: number
}

const mean = (results: ReadonlyArray<Load.LoadResult>): Side => {
  const failures: Record<string, number> = {}
  for (const r of results) for (const [k, v] of Object.entries(r.failures)) failures[k] = (failures[k] ?? 0) + v
  const avg = (f: (r: Load.LoadResult) => number) => results.reduce((s, r) => s + f(r), 0) / results.length
  return { rps: avg((r) => r.rps), p50: avg((r) => r.p50), p99: avg((r) => r.p99), failures }
}

/** The hand-written peer on a copy of Herald's database `source`, answering `accountsJson` for `GET /accounts`. */
export const startPeer = async (source: string, file: string, accountsJson: string) => {
  const port = await HeraldServer.freePort()
  return HeraldServer.startPeer({
    script: path.join(import.meta.dirname, "peers/create-peer.mjs"),
    args: [source, file, String(port)],
    port,
    env: { ACCOUNTS_JSON: accountsJson }
  })
}

export const run = async (options: {
  readonly dir: string
  readonly seconds: number
  readonly rounds: number
  readonly connections?: number
}): Promise<Result> => {
  const connections = options.connections ?? 32
  const herald = await HeraldServer.start({ dataDir: path.join(options.dir, "herald") })
  try {
    const headers = { authorization: `Bearer ${herald.key}`, "content-type": "application/json" }
    const { id: target, text: accountsText } = await HeraldServer.draftAccount(herald.base, herald.key)
    const accountsJson = path.join(options.dir, "accounts.json")
    fs.writeFileSync(accountsJson, accountsText)
    // The peer's database: a consistent copy of Herald's (schema, indexes, organization, key, accounts).
    const peer = await startPeer(
      path.join(options.dir, "herald", "herald.db"),
      path.join(options.dir, "peer.db"),
      accountsJson
    )
    try {
      await HeraldServer.sleep(1000)
      const rss = { herald: [HeraldServer.rssMiB(herald.child.pid)], peer: [HeraldServer.rssMiB(peer.child.pid)] }
      const body = HeraldServer.draftBody(target)
      const load = (base: string, what: "posts" | "accounts") =>
        Load.run(
          what === "posts"
            ? { url: `${base}/posts`, method: "POST", headers, body }
            : { url: `${base}/accounts`, method: "GET", headers: { authorization: headers.authorization } },
          { connections, seconds: options.seconds }
        )
      const runs = {
        posts: { herald: [] as Array<Load.LoadResult>, peer: [] as Array<Load.LoadResult> },
        accounts: { herald: [] as Array<Load.LoadResult>, peer: [] as Array<Load.LoadResult> }
      }
      for (const what of ["posts", "accounts"] as const) {
        for (let round = 0; round < options.rounds; round++) {
          runs[what].herald.push(await load(herald.base, what))
          runs[what].peer.push(await load(peer.base, what))
        }
        rss.herald.push(HeraldServer.rssMiB(herald.child.pid))
        rss.peer.push(HeraldServer.rssMiB(peer.child.pid))
      }
      return {
        posts: { herald: mean(runs.posts.herald), peer: mean(runs.posts.peer) },
        accounts: { herald: mean(runs.accounts.herald), peer: mean(runs.accounts.peer) },
        rss,
        connections,
        seconds: options.seconds,
        rounds: options.rounds
      }
    } finally {
      await peer.stop()
    }
  } finally {
    await herald.stop()
  }
}

/** (a) on Postgres, its own row: `herald serve` and a node:http + pg peer on one fresh database. */
export const runPostgres = (options: { readonly dir: string; readonly seconds: number; readonly rounds: number }) =>
  RequestPathPg.run(options)

// `npx tsx bench/RequestPath.ts [seconds] [rounds]`: this part alone.
if (import.meta.url === `file://${process.argv[1]}`) {
  const os = await import("node:os")
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-request-path-"))
  try {
    const r = await run({ dir, seconds: Number(process.argv[2] ?? "5"), rounds: Number(process.argv[3] ?? "2") })
    const line = (label: string, h: Side, p: Side) =>
      console.log(
        `${label}: herald ${h.rps.toFixed(0)} req/s (p50 ${h.p50.toFixed(1)} ms, p99 ${h.p99.toFixed(1)} ms) | peer ${
          p.rps.toFixed(0)
        } req/s (p50 ${p.p50.toFixed(1)} ms, p99 ${p.p99.toFixed(1)} ms) | ratio ${(h.rps / p.rps).toFixed(2)}x ${
          JSON.stringify([h.failures, p.failures])
        }`
      )
    line("POST /posts", r.posts.herald, r.posts.peer)
    line("GET /accounts", r.accounts.herald, r.accounts.peer)
    const pgDir = path.join(dir, "pg")
    console.log(
      `POST /posts on Postgres: ${
        RequestPathPg.describe(
          await runPostgres({
            dir: pgDir,
            seconds: Number(process.argv[2] ?? "5"),
            rounds: Number(process.argv[3] ?? "2")
          })
        )
      }`
    )
    console.log(
      `RSS MiB (idle, after a, after c): herald ${r.rss.herald.map((x) => x.toFixed(0)).join(", ")} | peer ${
        r.rss.peer.map((x) => x.toFixed(0)).join(", ")
      }`
    )
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}
