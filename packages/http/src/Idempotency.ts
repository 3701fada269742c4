/**
 * The `Idempotency-Key` request header on the create endpoints (`IdempotentRequests` has the rules).
 * A create handler wrapped by `idempotent` runs as before when the header is absent. With it, the key
 * is checked (400 `validation_error`), the request's fingerprint (caller, method, path and query,
 * canonical JSON body) is taken, and then either the first answer is sent again (same status and
 * body, with `Idempotent-Replayed: true`), or 409/422 is answered, or the handler runs holding the key.
 *
 * A handler holding a key runs in a fiber of its own, detached from the request's: a client that
 * drops the connection does not interrupt it, so what it stores is always recorded with its answer
 * (or, on an error answer, the key is freed). The client's retry with the key then gets that answer.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as IdempotentRequests from "@herald/core/access/IdempotentRequests"
import type { IdempotencyStore } from "@herald/core/access/IdempotencyStore"
import type { Crypto } from "@herald/core/kernel/Crypto"
import type { DomainError } from "@herald/core/kernel/Errors"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as Fiber from "effect/Fiber"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Auth from "./Auth.js"
import * as Envelope from "./Envelope.js"
import * as RequestMiddleware from "./RequestMiddleware.js"

/** The header, lower-cased as node presents it. */
const headerName = IdempotentRequests.header.toLowerCase()

/** The response header set on an answer sent again. */
export const replayedHeader = "idempotent-replayed"

const decoder = new TextDecoder()

/** A response's body as text, when it is held in memory (every create handler's is). */
const bodyText = (response: HttpServerResponse.HttpServerResponse): string | undefined => {
  const body = response.body
  switch (body._tag) {
    case "Uint8Array":
      return decoder.decode(body.body)
    case "Raw":
      return typeof body.body === "string"
        ? body.body
        : body.body instanceof Uint8Array
        ? decoder.decode(body.body)
        : undefined
    default:
      return undefined
  }
}

/** The request's body for the fingerprint: parsed JSON, or its text when it is not JSON. */
const bodyShape = (text: string): IdempotentRequests.RequestShape["body"] => {
  if (text.trim() === "") return { _tag: "Json", value: null }
  try {
    return { _tag: "Json", value: JSON.parse(text) as unknown }
  } catch {
    return { _tag: "Text", text }
  }
}

const replay = (answer: { readonly status: number; readonly body: string }) =>
  HttpServerResponse.text(answer.body, {
    status: answer.status,
    contentType: "application/json",
    headers: { [replayedHeader]: "true" }
  })

/**
 * Runs the handler holding the claim and settles the key by its outcome: a kept (2xx) answer is
 * recorded, anything else frees the key. The record is tried a few times; a record that still
 * cannot be written leaves the key held (409 until it expires) rather than free, since what the
 * handler stored would be created again.
 */
const settle = <E, R>(
  claim: Parameters<typeof IdempotentRequests.complete>[0],
  handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(handler)
    const response = Exit.isSuccess(exit) ? exit.value : undefined
    const body = response === undefined ? undefined : bodyText(response)
    if (response !== undefined && body !== undefined && IdempotentRequests.isKept(response.status)) {
      yield* IdempotentRequests.complete(claim, { status: response.status, body }).pipe(
        Effect.retry({ times: 3, schedule: Schedule.exponential("100 millis") }),
        Effect.catchAllCause((cause) =>
          Effect.logError(
            "Idempotency-Key: the answer could not be recorded; the key stays held until it expires",
            cause
          )
        )
      )
    } else {
      yield* IdempotentRequests.release(claim).pipe(
        Effect.retry({ times: 3, schedule: Schedule.exponential("100 millis") }),
        Effect.catchAllCause((cause) =>
          Effect.logError("Idempotency-Key: the key could not be freed after an error answer", cause)
        )
      )
    }
    return yield* exit
  })

const guarded = <E, R>(
  request: HttpServerRequest.HttpServerRequest,
  rawKey: string,
  handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) =>
  Effect.gen(function*() {
    const key = yield* IdempotentRequests.checkKey(rawKey)
    const principal = yield* Auth.CurrentKey
    const text = yield* request.text.pipe(Effect.orElseSucceed(() => ""))
    const fingerprint = yield* IdempotentRequests.fingerprintOf({
      caller: principal.session === undefined ? `key:${principal.key.id}` : `user:${principal.session.user.id}`,
      method: request.method,
      path: request.url,
      body: bodyShape(text)
    })
    const meta = yield* FiberRef.get(Envelope.currentMeta)
    return yield* Effect.uninterruptibleMask((restore) =>
      Effect.gen(function*() {
        const decision = yield* IdempotentRequests.begin({
          organizationId: principal.organization.id,
          key,
          fingerprint,
          holder: meta.request_id
        }).pipe(Effect.catchTag("PersistenceError", Effect.die))
        if (decision._tag === "Replay") {
          yield* RequestMiddleware.annotateRequestLog("idempotent", "replayed")
          return replay(decision.answer)
        }
        yield* RequestMiddleware.annotateRequestLog("idempotent", "first")
        // Detached: neither the client's disconnect nor the request fiber's end interrupts it.
        const fiber = yield* Effect.forkDaemon(Effect.interruptible(settle(decision.claim, handler)))
        return yield* restore(Fiber.join(fiber))
      })
    )
  })

/**
 * A create handler that honours the `Idempotency-Key` header (see the module comment). Without the
 * header it is the handler itself.
 */
export const idempotent = <E, R>(
  handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  E | DomainError,
  R | HttpServerRequest.HttpServerRequest | Auth.CurrentKey | IdempotencyStore | Crypto
> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const raw = request.headers[headerName]
    return raw === undefined ? handler : guarded(request, raw, handler)
  })

/**
 * A handler's data as the response HttpApi would send for an endpoint declaring
 * `Envelope.ok(schema)` with `status`: the same bytes, built here so that `idempotent` can keep them.
 */
export const respond = <A, I>(schema: Schema.Schema<A, I, never>, status: number) => (data: A) =>
  Effect.flatMap(
    Effect.orDie(Envelope.encodeOk(schema, data)),
    (body) => Effect.orDie(HttpServerResponse.json(body, { status }))
  )

/** The header as the create endpoints declare it (for the API description; `idempotent` reads it). */
export const Headers = Schema.Struct({
  "idempotency-key": Schema.optional(Schema.String.annotations({
    description: `${IdempotentRequests.header}: 1 to ${IdempotentRequests.maxKeyLength} printable ASCII characters ` +
      "(a UUID, say). The same key with the same request within 24 hours answers the first success again " +
      "(same status and body, header Idempotent-Replayed: true) and creates nothing; with another request, " +
      "422 idempotency_key_mismatch; while the first is still running, 409 idempotency_key_in_use (retryable). " +
      "An error answer is not kept: the key can be used again"
  }))
})
