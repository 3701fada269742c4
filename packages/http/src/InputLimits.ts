/**
 * Bounded input at the HTTP edge, before any handler, decoder or store sees a request:
 *
 * - A URL (path or query) holding `%00` is refused with 400 `validation_error`: no store ever sees
 *   U+0000 (Postgres cannot hold it in text, SQLite would), so every store answers alike.
 * - Every request body is read here, whatever the route (`/api/v1`, `/dashboard/api`, the device
 *   flow, OAuth callbacks, paths no route answers), at most `maxBodyBytes` (1 MiB): a longer one is
 *   refused with 413 `validation_error` while it streams in (from its Content-Length alone when it
 *   announces one), never buffered whole. The one exception is the signed upload URL
 *   (`/uploads/media/{id}`): media bytes stream from there to the blob store under its own cap.
 * - A JSON body is scanned once, without recursion and before any parsing, for nesting deeper than
 *   `maxDepth` (32), a container with more than `maxMembers` (1,000) members, and the escape
 *   `\u0000` in any string or key: each a 400 `validation_error`; except that the bulk endpoints'
 *   item arrays past their own limit get the spec's `bulk_limit_exceeded` (`bulkLimitError`). A body
 *   of any type holding a raw U+0000, and a form body holding `%00`, are refused alike.
 *
 * The body read here is handed on to the handlers (the request's `text`, `json`... answer from it).
 */
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as UrlParams from "@effect/platform/UrlParams"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { DomainError } from "@herald/core/kernel/Errors"
import * as Retries from "@herald/core/publishing/Retries"
import * as BulkPosts from "@herald/core/workflow/BulkPosts"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type * as Http from "node:http"

/** The most bytes a request body may carry (media bytes to the upload URL aside). */
export const maxBodyBytes = 1_048_576

/** The deepest nesting of arrays and objects a JSON body may have. */
export const maxDepth = 32

/** The most members (elements or keys) one JSON array or object may have. */
export const maxMembers = 1_000

/** Past this many bytes discarded after a 413, the connection is dropped rather than drained. */
const maxDiscardedBytes = 64 * maxBodyBytes

const nulMessage = "Must not contain the NUL character (U+0000)"

const refused = (path: string, message: string, details: Record<string, unknown> = {}, status?: number) =>
  DomainError.of(
    "validation_error",
    path === "" ? message : `${path}: ${message}`,
    { validation_errors: [{ path, message }], ...details },
    status
  )

export const tooLarge = (): DomainError =>
  refused(
    "",
    `The request body is larger than ${maxBodyBytes} bytes (1 MiB); upload media through POST /media/upload`,
    {
      max_bytes: maxBodyBytes
    },
    413
  )

// ---------------------------------------------------------------------------------------------------
// The scan
// ---------------------------------------------------------------------------------------------------

export type ShapeProblem =
  | { readonly _tag: "TooDeep" }
  | { readonly _tag: "TooManyMembers" }
  | { readonly _tag: "Nul" }

const isHex0 = (text: string, i: number) => text.charCodeAt(i) === 48 // "0"

/**
 * One pass over JSON text (valid or not): the first nesting deeper than `maxDepth`, container with
 * more than `maxMembers` members, or `\u0000` escape in a string (or raw U+0000 anywhere). Linear, no recursion, no parsing.
 */
export const scanJson = (text: string): ShapeProblem | undefined => {
  // commas[d]: separators seen in the container open at depth d.
  const commas: Array<number> = [0]
  let depth = 0
  let inString = false
  let nul = false
  const n = text.length
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    // A raw U+0000 is invalid JSON anyway; it is named for what it is.
    if (c === 0) nul = true
    if (inString) {
      if (c === 92 /* \ */) {
        if (
          text.charCodeAt(i + 1) === 117 /* u */ && isHex0(text, i + 2) && isHex0(text, i + 3) &&
          isHex0(text, i + 4) && isHex0(text, i + 5)
        ) nul = true
        i += 1
      } else if (c === 34 /* " */) {
        inString = false
      }
      continue
    }
    switch (c) {
      case 34:
        inString = true
        break
      case 91: // [
      case 123: // {
        depth += 1
        if (depth > maxDepth) return { _tag: "TooDeep" }
        commas[depth] = 0
        break
      case 93: // ]
      case 125: // }
        if (depth > 0) depth -= 1
        break
      case 44: // ,
        commas[depth] = (commas[depth] ?? 0) + 1
        if (depth > 0 && commas[depth]! >= maxMembers) return { _tag: "TooManyMembers" }
        break
    }
  }
  return nul ? { _tag: "Nul" } : undefined
}

/** The dotted path of the first string or key holding U+0000 in a parsed value; iterative. */
export const nulPath = (value: unknown): string | undefined => {
  const stack: Array<{ readonly value: unknown; readonly path: string }> = [{ value, path: "" }]
  const join = (path: string, key: string) => (path === "" ? key : `${path}.${key}`)
  while (stack.length > 0) {
    const { path, value: v } = stack.pop()!
    if (typeof v === "string") {
      if (v.includes("\u0000")) return path
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], path: join(path, String(i)) })
    } else if (typeof v === "object" && v !== null) {
      const entries = Object.entries(v as Record<string, unknown>)
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, member] = entries[i]!
        if (key.includes("\u0000")) return join(path, key.replaceAll("\u0000", "\\u0000"))
        stack.push({ value: member, path: join(path, key) })
      }
    }
  }
  return undefined
}

/** The answer to a body whose scan found a problem. */
export const shapeError = (problem: ShapeProblem, text: string): DomainError => {
  switch (problem._tag) {
    case "TooDeep":
      return refused("", `The request body nests arrays and objects deeper than ${maxDepth} levels`, {
        max_depth: maxDepth
      })
    case "TooManyMembers":
      return refused("", `An array or object in the request body has more than ${maxMembers} members`, {
        max_members: maxMembers
      })
    case "Nul": {
      let path = ""
      try {
        path = nulPath(JSON.parse(text)) ?? ""
      } catch {
        // Not JSON: the handler would say invalid_json; the NUL is refused first all the same.
      }
      return refused(path, nulMessage)
    }
  }
}

/** 400 `validation_error` for a URL holding `%00` (a NUL in its path or query), else undefined. */
export const urlError = (url: string): DomainError | undefined => {
  if (!/%00/i.test(url)) return undefined
  const query = url.indexOf("?")
  const inQuery = query >= 0 && /%00/i.test(url.slice(query))
  return refused(inQuery ? "query" : "path", nulMessage)
}

// ---------------------------------------------------------------------------------------------------
// Reading the body
// ---------------------------------------------------------------------------------------------------

const unreadable = () => DomainError.of("invalid_json", "The request body could not be read")

/**
 * The body as text, at most `maxBodyBytes`: past that, 413 at once; the rest of the body is read and
 * discarded (so the client reads the answer, not a reset) up to `maxDiscardedBytes`, then dropped.
 * A request that is not Node's (an in-process web handler) is read whole, then measured.
 */
export const readBody = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<string, DomainError> => {
  const announced = request.headers["content-length"]
  if (announced !== undefined && /^\d+$/.test(announced) && Number(announced) > maxBodyBytes) {
    // Never read: Node discards the unread body once the answer is sent.
    return Effect.fail(tooLarge())
  }
  const incoming = NodeHttpServerRequest.toIncomingMessage(request) as Http.IncomingMessage | undefined
  if (typeof incoming?.on !== "function") {
    // Not a Node request (the in-process web handler): read whole, then measured.
    return Effect.flatMap(
      Effect.mapError(request.text, unreadable),
      (text) => (Buffer.byteLength(text) > maxBodyBytes ? Effect.fail(tooLarge()) : Effect.succeed(text))
    )
  }
  return Effect.async<string, DomainError>((resume) => {
    const chunks: Array<Buffer> = []
    let size = 0
    let discarded = 0
    const stop = () => {
      incoming.off("data", onData)
      incoming.off("end", onEnd)
      incoming.off("error", onError)
    }
    const discard = (chunk: Buffer) => {
      discarded += chunk.length
      if (discarded > maxDiscardedBytes) {
        incoming.off("data", discard)
        incoming.destroy()
      }
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size <= maxBodyBytes) {
        chunks.push(chunk)
        return
      }
      stop()
      chunks.length = 0
      incoming.on("data", discard)
      incoming.on("error", () => undefined)
      resume(Effect.fail(tooLarge()))
    }
    const onEnd = () => {
      stop()
      resume(Effect.succeed(Buffer.concat(chunks).toString("utf8")))
    }
    const onError = () => {
      stop()
      resume(Effect.fail(unreadable()))
    }
    incoming.on("data", onData)
    incoming.once("end", onEnd)
    incoming.once("error", onError)
    return Effect.sync(stop)
  })
}

/** The request, answering `text`, `json`, `arrayBuffer`, `urlParamsBody` and `stream` from `text`. */
export const withBody = (
  request: HttpServerRequest.HttpServerRequest,
  text: string
): HttpServerRequest.HttpServerRequest => {
  const decodeError = (cause: unknown) => new HttpServerError.RequestError({ request, reason: "Decode", cause })
  const bytes = () => new TextEncoder().encode(text)
  return Object.create(request, {
    text: { get: () => Effect.succeed(text) },
    json: {
      get: () => Effect.try({ try: () => (text === "" ? null : JSON.parse(text)) as unknown, catch: decodeError })
    },
    arrayBuffer: { get: () => Effect.sync(() => bytes().buffer as ArrayBuffer) },
    urlParamsBody: {
      get: () => Effect.try({ try: () => UrlParams.fromInput(new URLSearchParams(text)), catch: decodeError })
    },
    stream: { get: () => Stream.suspend(() => Stream.succeed(bytes())) },
    // A modified request (a router mounting a prefix) still answers from the body read here.
    modify: {
      value: (options: Parameters<HttpServerRequest.HttpServerRequest["modify"]>[0]) =>
        withBody(request.modify(options), text)
    }
  }) as HttpServerRequest.HttpServerRequest
}

/**
 * The bulk endpoints' own limit answer, which the spec names for too many items: for a body whose
 * item array (`posts` of POST /posts/bulk, `post_ids` of POST /posts/retry-failed) is past its
 * endpoint's limit, `bulk_limit_exceeded` rather than the generic member cap. Asked only once the scan
 * found a container past `maxMembers`; the body is at most `maxBodyBytes`, so parsing it is bounded.
 */
const bulkArrays: ReadonlyArray<{
  readonly path: string
  readonly field: string
  readonly limit: number
  readonly error: (received: number) => DomainError
}> = [
  { path: "/api/v1/posts/bulk", field: "posts", limit: BulkPosts.maxItems, error: BulkPosts.limitExceeded },
  {
    path: "/api/v1/posts/retry-failed",
    field: "post_ids",
    limit: Retries.maxRetryPostIds,
    error: Retries.postIdsLimitExceeded
  }
]

const bulkLimitError = (method: string, url: string, text: string): DomainError | undefined => {
  if (method !== "POST") return undefined
  const pathname = url.split("?")[0]!.replace(/\/+$/, "")
  const endpoint = bulkArrays.find((e) => e.path === pathname)
  if (endpoint === undefined) return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return undefined
  const items = (parsed as Record<string, unknown>)[endpoint.field]
  return Array.isArray(items) && items.length > endpoint.limit ? endpoint.error(items.length) : undefined
}

const formTypes = ["multipart/", "application/x-www-form-urlencoded"]

const hasNoBody = (method: string) => method === "GET" || method === "HEAD" || method === "OPTIONS"

/** The signed upload URL: its handler streams the bytes to the blob store under the media cap. */
export const streamsItsBody = (url: string): boolean => url.startsWith("/uploads/media/")

/** The problem of a body that is not JSON: a raw U+0000, or `%00` in a form body. */
const formNul = (text: string, contentType: string): ShapeProblem | undefined =>
  text.includes("\u0000") || (contentType.startsWith("application/x-www-form-urlencoded") && /%00/i.test(text))
    ? { _tag: "Nul" }
    : undefined

/**
 * Applies the limits around `app`: the URL check on every request; the body read, size and scan on
 * every body but the upload URL's, whose handlers then read the body from memory.
 */
export const guard = <A, E, R>(
  app: Effect.Effect<A, E, R>
): Effect.Effect<A, E | DomainError, R | HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => guardRequest(request, app))

/** `guard` of the given request (for a request with a body, `app` gets the request with its body read, in its context). */
export const guardRequest = <A, E, R>(
  request: HttpServerRequest.HttpServerRequest,
  app: Effect.Effect<A, E, R>
): Effect.Effect<A, E | DomainError, R> =>
  Effect.gen(function*() {
    const badUrl = urlError(request.url)
    if (badUrl !== undefined) return yield* Effect.fail(badUrl)
    if (hasNoBody(request.method) || streamsItsBody(request.url)) return yield* app
    const text = yield* readBody(request)
    const contentType = (request.headers["content-type"] ?? "").toLowerCase()
    const problem = formTypes.some((t) => contentType.startsWith(t)) ? formNul(text, contentType) : scanJson(text)
    if (problem !== undefined) {
      return yield* Effect.fail(
        (problem._tag === "TooManyMembers" ? bulkLimitError(request.method, request.url, text) : undefined) ??
          shapeError(problem, text)
      )
    }
    return yield* Effect.provideService(app, HttpServerRequest.HttpServerRequest, withBody(request, text))
  })
