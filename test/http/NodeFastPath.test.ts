/**
 * The node listener in isolation (`NodeFastPath`): on a `NodeFastPath.Server`, the routes it is given
 * are answered by it and everything else reaches the server's own `request` listener (the platform's
 * in production); what it writes is the response as the platform writes it (status, headers, cookies,
 * body), and a fiber that fails instead of answering gets 500 with no body.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as FastPath from "@herald/http/FastPath"
import * as NodeFastPath from "@herald/http/NodeFastPath"
import * as Effect from "effect/Effect"
import type * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const hot = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  return yield* HttpServerResponse.unsafeJson({
    method: request.method,
    url: request.url,
    header: request.headers["x-probe"] ?? null,
    cookie: request.cookies["c"] ?? null
  }, { status: 201, headers: { "x-hot": "1" } }).pipe(
    HttpServerResponse.setCookie("session", "abc", { httpOnly: true }),
    Effect.orDie
  )
})

/** A route given the request as an argument: it runs without the request in its context. */
const given = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.map(
    Effect.serviceOption(HttpServerRequest.HttpServerRequest),
    (inContext) =>
      HttpServerResponse.text(
        `${request.method} ${request.url} ${request.headers["x-probe"]} in context: ${inContext._tag}`
      )
  )

const routeOf: FastPath.RouteOf<never> = (method, url) =>
  method === "GET" && url.startsWith("/hot")
    ? hot
    : method === "GET" && url === "/given"
    ? given
    : method === "GET" && url === "/dies"
    ? Effect.die("boom")
    : undefined

describe("NodeFastPath", () => {
  const server = new NodeFastPath.Server()
  let base = ""
  beforeAll(async () => {
    server.on("request", (_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" })
      res.end("platform")
    })
    server.listener = Effect.runSync(NodeFastPath.make<never>(routeOf))
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  it("answers its routes with the response's status, headers, cookies and body", async () => {
    const res = await fetch(`${base}/hot?x=1`, { headers: { "x-probe": "p", cookie: "c=v; d=w" } })
    expect(res.status).toBe(201)
    expect(res.headers.get("x-hot")).toBe("1")
    expect(res.headers.get("content-type")).toBe("application/json")
    expect(res.headers.get("set-cookie")).toBe("session=abc; HttpOnly")
    const text = await res.text()
    expect(res.headers.get("content-length")).toBe(String(Buffer.byteLength(text)))
    expect(JSON.parse(text)).toEqual({ method: "GET", url: "/hot?x=1", header: "p", cookie: "v" })
  })

  it("gives a route that is a function of the request the request, without adding it to the context", async () => {
    const res = await fetch(`${base}/given`, { headers: { "x-probe": "p" } })
    expect(res.status).toBe(200)
    expect(await res.text()).toBe("GET /given p in context: None")
  })

  it("leaves every other request to the server's own listener", async () => {
    for (const [method, path] of [["GET", "/other"], ["HEAD", "/hot"], ["POST", "/hot"]] as const) {
      const res = await fetch(`${base}${path}`, { method })
      expect(res.headers.get("x-hot")).toBeNull()
      if (method !== "HEAD") expect(await res.text()).toBe("platform")
    }
  })

  it("answers 500 with no body when the fiber fails instead of answering", async () => {
    const res = await fetch(`${base}/dies`)
    expect(res.status).toBe(500)
    expect(await res.text()).toBe("")
  })

  it("goes back to the platform for everything once its listener is taken off", async () => {
    const listener = server.listener
    server.listener = NodeFastPath.none
    try {
      expect(await (await fetch(`${base}/hot`)).text()).toBe("platform")
    } finally {
      server.listener = listener
    }
  })
})

/**
 * When responses are written, read off node's calls on stand-ins for node's request and response:
 * a response finished within its request event waits for the end of the turn, with the turn's
 * others; one finished later is written when it finishes.
 */
describe("NodeFastPath: when responses are written", () => {
  const written: Array<string> = []
  const nodeRequest = (url: string) =>
    ({ method: "GET", url, headers: {}, socket: {} }) as unknown as Http.IncomingMessage
  const nodeResponse = (name: string) => {
    const response = {
      writableEnded: false,
      headersSent: false,
      writeHead: (status: number) => {
        response.headersSent = true
        written.push(`${name} head ${status}`)
      },
      end: (body?: Uint8Array | string) => {
        response.writableEnded = true
        written.push(`${name} end ${typeof body === "string" ? body : new TextDecoder().decode(body)}`)
      }
    }
    return response as unknown as Http.ServerResponse
  }
  const nextCheck = () => new Promise<void>((resolve) => setImmediate(resolve))

  it("writes the responses finished within their request events together, in order, at the end of the turn", async () => {
    written.length = 0
    const listener = Effect.runSync(
      NodeFastPath.make<never>((_method, url) => Effect.succeed(HttpServerResponse.text(url)))
    )
    expect(listener(nodeRequest("/a"), nodeResponse("a"))).toBe(true)
    expect(listener(nodeRequest("/b"), nodeResponse("b"))).toBe(true)
    await Promise.resolve()
    expect(written).toEqual([])
    await nextCheck()
    expect(written).toEqual(["a head 200", "a end /a", "b head 200", "b end /b"])
  })

  it("writes a response finished after its request event as soon as it finishes", async () => {
    written.length = 0
    let release = () => {}
    const gate = new Promise<void>((resolve) => (release = resolve))
    const listener = Effect.runSync(
      NodeFastPath.make<never>((_method, url) => Effect.as(Effect.promise(() => gate), HttpServerResponse.text(url)))
    )
    listener(nodeRequest("/later"), nodeResponse("later"))
    await nextCheck()
    expect(written).toEqual([])
    // Released in a check phase: the fiber finishes in that callback's microtasks, before the check
    // phase queued next. A response held for the end of its turn would not be written by then.
    const seen = await new Promise<Array<string>>((resolve) =>
      setImmediate(() => {
        release()
        setImmediate(() => resolve([...written]))
      })
    )
    expect(seen).toEqual(["later head 200", "later end /later"])
  })
})
