/**
 * A small keep-alive HTTP load client on node:http (autocannon is not installed): `connections`
 * clients, each with its own socket, send requests back to back for `seconds` (after `warmupSeconds`
 * not counted), and report requests/s and latency quantiles.
 */
import * as http from "node:http"

export interface Target {
  readonly url: string
  readonly method: "GET" | "POST"
  readonly headers?: Record<string, string>
  /** A fresh body per request (index given), for POSTs. */
  readonly body?: (i: number) => string
}

export interface LoadResult {
  readonly requests: number
  readonly seconds: number
  readonly rps: number
  readonly p50: number
  readonly p99: number
  /** Answers outside 2xx, by status. */
  readonly failures: Record<string, number>
  readonly firstFailure: string
}

const quantile = (sorted: ReadonlyArray<number>, q: number): number =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!

export const run = async (
  target: Target,
  options: { readonly connections: number; readonly seconds: number; readonly warmupSeconds?: number }
): Promise<LoadResult> => {
  const url = new URL(target.url)
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections })
  const latencies: Array<number> = []
  const failures: Record<string, number> = {}
  let firstFailure = ""
  let counter = 0
  const warmupEnd = performance.now() + (options.warmupSeconds ?? 1) * 1000
  const end = warmupEnd + options.seconds * 1000
  let measuredStart = 0

  const once = (i: number) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const body = target.body?.(i)
      const req = http.request({
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method: target.method,
        agent,
        headers: {
          ...target.headers,
          ...(body === undefined ? {} : { "content-length": String(Buffer.byteLength(body)) })
        }
      }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }))
        res.on("error", reject)
      })
      req.on("error", reject)
      if (body !== undefined) req.write(body)
      req.end()
    })

  await Promise.all(Array.from({ length: options.connections }, async () => {
    while (true) {
      const t = performance.now()
      if (t >= end) return
      const { status, text } = await once(counter++)
      const done = performance.now()
      if (t < warmupEnd) continue
      if (measuredStart === 0) measuredStart = t
      latencies.push(done - t)
      if (status < 200 || status >= 300) {
        failures[status] = (failures[status] ?? 0) + 1
        if (firstFailure === "") firstFailure = text.slice(0, 300)
      }
    }
  }))
  agent.destroy()
  const seconds = (performance.now() - warmupEnd) / 1000
  latencies.sort((a, b) => a - b)
  return {
    requests: latencies.length,
    seconds,
    rps: latencies.length / seconds,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    failures,
    firstFailure
  }
}

export const describe = (r: LoadResult): string =>
  `${r.rps.toFixed(0)} req/s (p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms)` +
  (Object.keys(r.failures).length > 0 ? ` failures ${JSON.stringify(r.failures)}` : "")
