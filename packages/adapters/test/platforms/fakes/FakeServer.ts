/**
 * A real HTTP server on 127.0.0.1 (random port) that records every request it receives and answers
 * through a handler. Multipart and JSON bodies are parsed before the handler runs, so tests can
 * assert what arrived on the wire.
 *
 * Every request with a body must carry `Content-Length` equal to the bytes received, never
 * `Transfer-Encoding: chunked`: the platforms' upload endpoints expect the length (TikTok's chunk `PUT`
 * refuses a request without it). A fake may add its own checks (`check`, e.g. against the platform's
 * published API description). A request that breaks a rule is answered `400` and recorded in
 * `violations`, and `close` then fails, so a test whose client broke a rule fails even when the client
 * swallowed the refusal; a test that breaks one on purpose takes it with `takeViolations`.
 */
import * as Effect from "effect/Effect"
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import type { AddressInfo } from "node:net"

export interface Recorded {
  readonly method: string
  readonly path: string
  readonly query: URLSearchParams
  /** The request target as sent (path and query, nothing decoded): for rules on how a query is written. */
  readonly target: string
  readonly headers: IncomingHttpHeaders
  readonly body: Buffer
  /** The body parsed as JSON, when it is JSON. */
  readonly json: unknown
  /** The body parsed as multipart/form-data or urlencoded form, when it is one. */
  readonly form: FormData | undefined
}

export interface Reply {
  readonly status: number
  readonly headers?: Readonly<Record<string, string>>
  /** A string or Buffer is sent as is; anything else as JSON. `undefined` sends no body. */
  readonly body?: unknown
  /** Drops the connection instead of answering (a network failure mid-request). */
  readonly drop?: boolean
}

export type Handler = (request: Recorded) => Reply | Promise<Reply>

/** What is wrong with a request (empty when nothing is), and with the reply the fake is about to send. */
export interface Check {
  readonly request: (request: Recorded) => ReadonlyArray<string>
  readonly reply?: (request: Recorded, reply: Reply) => ReadonlyArray<string>
  /** The platform's answer to a request that breaks its rules; a `400` naming the problems unless set. */
  readonly refusal?: (problems: ReadonlyArray<string>, request: Recorded) => Reply
}

export interface Violation {
  readonly method: string
  readonly path: string
  readonly problems: ReadonlyArray<string>
}

export interface FakeServer {
  readonly url: string
  readonly requests: Array<Recorded>
  /** Requests that broke a rule (and replies that broke the description), in order. */
  readonly violations: Array<Violation>
  /** Returns the violations so far and forgets them (for a test that sends a bad request on purpose). */
  readonly takeViolations: () => ReadonlyArray<Violation>
  /** Stops the server; fails when a violation was recorded and not taken. */
  readonly close: () => Promise<void>
}

export interface StartOptions {
  readonly check?: Check
}

/** `Content-Length` present and equal to the bytes received, and no chunked transfer coding. */
export const contentLengthProblems = (headers: IncomingHttpHeaders, received: number): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const encoding = headers["transfer-encoding"]
  if (encoding !== undefined) problems.push(`Transfer-Encoding: ${encoding} (the body must be sent with its length)`)
  const declared = headers["content-length"]
  if (declared === undefined) {
    if (received > 0) problems.push(`no Content-Length on a body of ${received} bytes`)
  } else if (Number(declared) !== received) {
    problems.push(`Content-Length ${declared} but ${received} bytes received`)
  }
  return problems
}

const parse = async (
  method: string,
  headers: IncomingHttpHeaders,
  body: Buffer
): Promise<{ json: unknown; form: FormData | undefined }> => {
  const type = headers["content-type"] ?? ""
  let json: unknown = undefined
  let form: FormData | undefined = undefined
  if (type.includes("json")) {
    try {
      json = JSON.parse(body.toString("utf8"))
    } catch {
      json = undefined
    }
  } else if (type.startsWith("multipart/form-data") || type.startsWith("application/x-www-form-urlencoded")) {
    form = await new Request("http://fake.invalid/", {
      method,
      headers: { "content-type": type },
      body
    }).formData()
  }
  return { json, form }
}

export const start = (handler: Handler, options: StartOptions = {}): Promise<FakeServer> =>
  new Promise((resolve, reject) => {
    const requests: Array<Recorded> = []
    const violations: Array<Violation> = []
    const server: Server = createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (chunk: Buffer) => chunks.push(chunk))
      req.on("end", () => {
        void (async () => {
          const body = Buffer.concat(chunks)
          const url = new URL(req.url ?? "/", "http://127.0.0.1")
          const method = req.method ?? "GET"
          const { form, json } = await parse(method, req.headers, body)
          const recorded: Recorded = {
            method,
            path: url.pathname,
            query: url.searchParams,
            target: req.url ?? "/",
            headers: req.headers,
            body,
            json,
            form
          }
          requests.push(recorded)
          const problems = [
            ...(method === "GET" || method === "HEAD" ? [] : contentLengthProblems(req.headers, body.byteLength)),
            ...(options.check?.request(recorded) ?? [])
          ]
          let reply: Reply
          if (problems.length > 0) {
            violations.push({ method, path: url.pathname, problems })
            reply = options.check?.refusal?.(problems, recorded) ?? { status: 400, body: { fake_violation: problems } }
          } else {
            reply = await handler(recorded)
            const wrong = options.check?.reply?.(recorded, reply) ?? []
            if (wrong.length > 0) {
              violations.push({ method, path: url.pathname, problems: wrong.map((p) => `reply ${reply.status}: ${p}`) })
            }
          }
          if (reply.drop === true) {
            req.socket.destroy()
            return
          }
          const out = reply.body === undefined
            ? undefined
            : typeof reply.body === "string" || Buffer.isBuffer(reply.body)
            ? reply.body
            : JSON.stringify(reply.body)
          const headers: Record<string, string> = { ...reply.headers }
          if (out !== undefined && headers["content-type"] === undefined && !(typeof reply.body === "string")) {
            headers["content-type"] = "application/json"
          }
          res.writeHead(reply.status, headers)
          res.end(out)
        })().catch((error: unknown) => {
          res.writeHead(500, { "content-type": "text/plain" })
          res.end(`fake failed: ${String(error)}`)
        })
      })
    })
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resolve({
        url: `http://127.0.0.1:${port}`,
        requests,
        violations,
        takeViolations: () => violations.splice(0, violations.length),
        close: () =>
          new Promise<void>((done, fail) => {
            server.closeAllConnections()
            server.close(() =>
              violations.length === 0
                ? done()
                : fail(
                  new Error(
                    `the fake at ${port} received requests that break the platform's rules:\n` +
                      violations.map((v) => `  ${v.method} ${v.path}: ${v.problems.join("; ")}`).join("\n")
                  )
                )
            )
          })
      })
    })
  })

/** Starts a fake for the length of the enclosing scope. */
export const scoped = (handler: Handler, options: StartOptions = {}) =>
  Effect.acquireRelease(Effect.promise(() => start(handler, options)), (server) => Effect.promise(() => server.close()))

/** Reads a form field that holds a file as bytes. */
export const fileBytes = async (form: FormData | undefined, name: string): Promise<Uint8Array | undefined> => {
  const entry = form?.get(name)
  if (entry === undefined || entry === null || typeof entry === "string") return undefined
  return new Uint8Array(await entry.arrayBuffer())
}

export const fileName = (form: FormData | undefined, name: string): string | undefined => {
  const entry = form?.get(name)
  return entry !== undefined && entry !== null && typeof entry !== "string" ? (entry as File).name : undefined
}
