/**
 * A real HTTP server on 127.0.0.1 (random port) that records every request it receives and answers
 * through a handler. Multipart and JSON bodies are parsed before the handler runs, so tests can
 * assert what arrived on the wire.
 */
import * as Effect from "effect/Effect"
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import type { AddressInfo } from "node:net"

export interface Recorded {
  readonly method: string
  readonly path: string
  readonly query: URLSearchParams
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

export interface FakeServer {
  readonly url: string
  readonly requests: Array<Recorded>
  readonly close: () => Promise<void>
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

export const start = (handler: Handler): Promise<FakeServer> =>
  new Promise((resolve, reject) => {
    const requests: Array<Recorded> = []
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
            headers: req.headers,
            body,
            json,
            form
          }
          requests.push(recorded)
          const reply = await handler(recorded)
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
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })

/** Starts a fake for the length of the enclosing scope. */
export const scoped = (handler: Handler) =>
  Effect.acquireRelease(Effect.promise(() => start(handler)), (server) => Effect.promise(() => server.close()))

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
