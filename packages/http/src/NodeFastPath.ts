/**
 * The fast path's routes answered at node:http's `request` event, below @effect/platform's HTTP
 * handler: the platform's per-request handling (its request fiber's scope, response handlers, tracer
 * check and response conversion) costs more than these routes' budget by itself. The request runs
 * the fast path's effects (`FastPath.routes`: the same authentication, limits, use case and request
 * middleware) on the runtime the server was started with, captured once, and the response is written
 * in one `writeHead` and `end`, as the platform writes it (at the end of the turn when it is ready
 * within its request event: `turnWriter`). Every other request, and a request to these
 * routes while tracing is on, goes to the platform unchanged.
 */
import type * as Headers from "@effect/platform/Headers"
import * as IncomingMessage from "@effect/platform/HttpIncomingMessage"
import type { HttpMethod } from "@effect/platform/HttpMethod"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as Socket from "@effect/platform/Socket"
import * as UrlParams from "@effect/platform/UrlParams"
import * as Cookies from "@effect/platform/Cookies"
import * as NodeMultipart from "@effect/platform-node/NodeMultipart"
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Inspectable from "effect/Inspectable"
import * as Option from "effect/Option"
import type * as Stream from "effect/Stream"
import * as Runtime from "effect/Runtime"
import * as RuntimeFlags from "effect/RuntimeFlags"
import * as Http from "node:http"
import type * as FastPath from "./FastPath.js"

/** Answers a request itself (true) or leaves it to the platform (false). */
export type Listener = (request: Http.IncomingMessage, response: Http.ServerResponse) => boolean

/** The fast path's node listener, or none (fast path off, or tracing on). */
export class NodeListener extends Context.Tag("@herald/http/NodeFastPath/NodeListener")<
  NodeListener,
  Option.Option<Listener>
>() {}

/**
 * A node request as the platform's `HttpServerRequest`, with the platform's node semantics
 * (headers as node parsed them, `method` upper-cased, cookies parsed once, bodies read from the
 * stream); the fast path's routes read the headers, the URL and, through `InputLimits`, the source.
 */
class NodeRequest extends Inspectable.Class implements HttpServerRequest.HttpServerRequest {
  readonly [HttpServerRequest.TypeId]: HttpServerRequest.TypeId = HttpServerRequest.TypeId
  readonly [IncomingMessage.TypeId]: IncomingMessage.TypeId = IncomingMessage.TypeId
  private cachedCookies: Record<string, string> | undefined
  private textEffect: Effect.Effect<string, HttpServerError.RequestError> | undefined

  constructor(
    readonly source: Http.IncomingMessage,
    readonly url: string,
    private readonly headersOverride?: Headers.Headers,
    private readonly remoteAddressOverride?: string
  ) {
    super()
  }

  private readonly decodeError = (cause: unknown): HttpServerError.RequestError =>
    new HttpServerError.RequestError({ request: this, reason: "Decode", cause })

  get originalUrl(): string {
    return this.source.url ?? ""
  }
  get method(): HttpMethod {
    return (this.source.method ?? "GET").toUpperCase() as HttpMethod
  }
  get headers(): Headers.Headers {
    return this.headersOverride ?? (this.source.headers as unknown as Headers.Headers)
  }
  get cookies(): Record<string, string> {
    return this.cachedCookies ??= Cookies.parseHeader(this.headers["cookie"] ?? "")
  }
  get remoteAddress(): Option.Option<string> {
    return Option.fromNullable(this.remoteAddressOverride ?? this.source.socket.remoteAddress)
  }
  get text(): Effect.Effect<string, HttpServerError.RequestError> {
    return this.textEffect ??= Effect.runSync(
      Effect.cached(
        Effect.flatMap(
          IncomingMessage.MaxBodySize,
          (maxBodySize) =>
            NodeStream.toString(() => this.source, {
              onFailure: this.decodeError,
              maxBytes: Option.getOrUndefined(maxBodySize)
            })
        )
      )
    )
  }
  get json(): Effect.Effect<unknown, HttpServerError.RequestError> {
    return Effect.tryMap(this.text, {
      try: (text) => (text === "" ? null : JSON.parse(text)) as unknown,
      catch: this.decodeError
    })
  }
  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpServerError.RequestError> {
    return Effect.flatMap(
      this.text,
      (text) => Effect.try({ try: () => UrlParams.fromInput(new URLSearchParams(text)), catch: this.decodeError })
    )
  }
  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpServerError.RequestError> {
    return Effect.flatMap(IncomingMessage.MaxBodySize, (maxBodySize) =>
      Effect.map(
        NodeStream.toUint8Array(() => this.source, {
          onFailure: this.decodeError,
          maxBytes: Option.getOrUndefined(maxBodySize)
        }),
        (bytes) => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
      ))
  }
  get stream(): Stream.Stream<Uint8Array, HttpServerError.RequestError> {
    return NodeStream.fromReadable<HttpServerError.RequestError>(() => this.source, this.decodeError)
  }
  get multipart() {
    return NodeMultipart.persisted(this.source, this.source.headers)
  }
  get multipartStream() {
    return NodeMultipart.stream(this.source, this.source.headers)
  }
  get upgrade(): Effect.Effect<Socket.Socket, HttpServerError.RequestError> {
    return Effect.fail(
      new HttpServerError.RequestError({
        request: this,
        reason: "Decode",
        description: "not an upgradeable ServerRequest"
      })
    )
  }
  modify(
    options: { readonly url?: string; readonly headers?: Headers.Headers; readonly remoteAddress?: string }
  ): HttpServerRequest.HttpServerRequest {
    return new NodeRequest(
      this.source,
      options.url ?? this.url,
      options.headers ?? this.headersOverride,
      options.remoteAddress ?? this.remoteAddressOverride
    )
  }
  toJSON(): unknown {
    return IncomingMessage.inspect(this, {
      _id: "@effect/platform/HttpServerRequest",
      method: this.method,
      url: this.originalUrl
    })
  }
}

/** Writes `response` as the platform's node server does for a body in memory (HEAD never comes here). */
const write = (nodeResponse: Http.ServerResponse, response: HttpServerResponse.HttpServerResponse): void => {
  if (nodeResponse.writableEnded) return
  let headers: Http.OutgoingHttpHeaders = response.headers
  if (!Cookies.isEmpty(response.cookies)) {
    const toSet = Cookies.toSetCookieHeaders(response.cookies)
    const own = response.headers["set-cookie"]
    if (own !== undefined) toSet.push(own)
    headers = { ...headers, "set-cookie": toSet }
  }
  const body = response.body
  switch (body._tag) {
    case "Uint8Array":
      nodeResponse.writeHead(response.status, headers)
      nodeResponse.end(body.body)
      return
    case "Raw":
      if (typeof body.body === "string" || body.body instanceof Uint8Array) {
        nodeResponse.writeHead(response.status, headers)
        nodeResponse.end(body.body)
        return
      }
      break
    case "Empty":
      nodeResponse.writeHead(response.status, headers)
      nodeResponse.end()
      return
  }
  // A streamed or form body: the fast path's routes never answer one.
  failed(nodeResponse)
}

/** What the platform answers when the request's fiber fails instead of giving a response. */
const failed = (nodeResponse: Http.ServerResponse): void => {
  if (nodeResponse.writableEnded) return
  if (!nodeResponse.headersSent) nodeResponse.writeHead(500)
  nodeResponse.end()
}

/** What a route's fiber ended with. */
type Answer = Exit.Exit<HttpServerResponse.HttpServerResponse, unknown>

/**
 * The responses finished within their request events in this turn of the event loop, written
 * together at its end (`setImmediate` runs right after the poll phase that delivered the requests).
 * Written one by one, each response wakes a client that went back to sleep after the previous one,
 * and on loopback that wake-up is paid inside the server's `writev`: `GET /accounts` spent 24-29 us
 * of system time per request written at once, 9-12 us written at the end of the turn, and answered
 * 42% more requests (bench/results.md, "Request path"). A response waits at most for the rest of its
 * turn's requests, which are answered in the same turn either way.
 */
const turnWriter = () => {
  let pending: Array<readonly [Http.ServerResponse, Answer]> = []
  const flush = () => {
    const turn = pending
    pending = []
    for (const [nodeResponse, exit] of turn) answer(nodeResponse, exit)
  }
  return (nodeResponse: Http.ServerResponse, exit: Answer) => {
    if (pending.length === 0) setImmediate(flush)
    pending.push([nodeResponse, exit])
  }
}

const answer = (nodeResponse: Http.ServerResponse, exit: Answer) => {
  if (Exit.isFailure(exit)) return failed(nodeResponse)
  try {
    write(nodeResponse, exit.value)
  } catch {
    // Node refused the head (a header it cannot send): the platform answers 500 then too.
    failed(nodeResponse)
  }
}

/**
 * The listener for `routes` (`FastPath.routeOf` picks one per request), on the runtime of the
 * effect that makes it. Like the platform's handler, a request runs uninterruptibly to its end.
 */
export const make = <R>(
  routeOf: FastPath.RouteOf<R>
): Effect.Effect<Listener, never, R> =>
  Effect.map(Effect.runtime<R>(), (runtime) => {
    // The request's fiber starts with interruption off and, for a route that reads it there, the
    // request in its context (what `uninterruptible` and `provideService` would set on it, without
    // their per-request steps). A route given the request as an argument runs on the runtime's own
    // context: no copy of its services per request.
    const runtimeFlags = RuntimeFlags.disable(runtime.runtimeFlags, RuntimeFlags.Interruption)
    const runPlain = Runtime.runFork(
      Runtime.make({ context: runtime.context, runtimeFlags, fiberRefs: runtime.fiberRefs })
    )
    const endOfTurn = turnWriter()
    return (nodeRequest, nodeResponse) => {
      const method = nodeRequest.method
      const url = nodeRequest.url
      if (method === undefined || url === undefined) return false
      const route = routeOf(method, url)
      if (route === undefined) return false
      const request = new NodeRequest(nodeRequest, url)
      const fiber = typeof route === "function" ? runPlain(route(request)) : Runtime.runFork(Runtime.make({
        context: Context.add(runtime.context, HttpServerRequest.HttpServerRequest, request),
        runtimeFlags,
        fiberRefs: runtime.fiberRefs
      }))(route)
      // Finished within the request event: answered at the end of the turn with the turn's others.
      // Finished later (a commit, a Postgres reply): answered at once, as such answers come in
      // bursts already, and the end of the turn they finish in can be a whole turn away.
      const done = fiber.unsafePoll()
      if (done !== null) endOfTurn(nodeResponse, done)
      else fiber.addObserver((exit) => answer(nodeResponse, exit))
      return true
    }
  })

/** Answers nothing: every request goes to the platform. */
export const none: Listener = () => false

/** A node:http server whose `request` event goes to `listener` first. */
export class Server extends Http.Server {
  listener: Listener = none

  override emit(event: string, ...args: Array<unknown>): boolean {
    if (event === "request" && this.listener(args[0] as Http.IncomingMessage, args[1] as Http.ServerResponse)) {
      return true
    }
    return super.emit(event, ...args)
  }
}
