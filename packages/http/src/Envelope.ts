/**
 * The spec's response envelope: `{data, error: null, meta}` on success and
 * `{data: null, error: {message, code, retryable, details?}, meta}` on failure; the auth layer's own
 * 401/402 bodies carry only `error.message`, `error.code` (and `subscription_status` on 402) and
 * `meta.timestamp`.
 *
 * Success bodies are encoded by HttpApi through `ok(schema)`, which reads the request's meta from a
 * FiberRef set by the request middleware. Every error body is built by `errorBody`/`authBody`, called
 * from one place (the request middleware); the error schemas here describe those bodies for OpenAPI.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { DomainError, ErrorCode } from "@herald/core/kernel/Errors"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import { globalValue } from "effect/GlobalValue"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as ErrorCatalogue from "./ErrorCatalogue.js"

export const Meta = Schema.Struct({
  request_id: Schema.String,
  timestamp: Schema.String.annotations({ description: "ISO 8601, UTC" })
}).annotations({ identifier: "Meta" })
export type Meta = typeof Meta.Type

/** The meta of the request being answered; set by the request middleware around the whole request. */
export const currentMeta: FiberRef.FiberRef<Meta> = globalValue(
  Symbol.for("@herald/http/Envelope/currentMeta"),
  () => FiberRef.unsafeMake<Meta>({ request_id: "", timestamp: "" })
)

/** The success envelope around `data`; handlers return the bare data. */
export const ok = <A, I, R>(data: Schema.Schema<A, I, R>) =>
  Schema.transformOrFail(
    Schema.Struct({ data, error: Schema.Null, meta: Meta }),
    Schema.typeSchema(data),
    {
      strict: true,
      decode: (envelope) => ParseResult.succeed(envelope.data),
      encode: (value) => Effect.map(FiberRef.get(currentMeta), (meta) => ({ data: value, error: null, meta }))
    }
  )

/** `data` in the success envelope, encoded by its schema as HttpApi encodes a handler's data. */
export const encodeOk = <A, I, R>(schema: Schema.Schema<A, I, R>, data: A) => Schema.encode(ok(schema))(data)

/**
 * A JSON text as the body, not its UTF-8 bytes: the same headers and bytes on the wire without an
 * encoding pass (node writes the text with the head in one write).
 */
const jsonText = (text: string, status: number): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.raw(text, {
    status,
    contentType: "application/json",
    contentLength: Buffer.byteLength(text, "utf8")
  })

/**
 * The success envelope as a finished response, for hot handlers whose data is built in its wire
 * shape: the schema's type and encoded forms must be one (`Schema<A, A>`), so HttpApi's encoding
 * pass over the data (a validation of what the handler just built) can be skipped. The endpoint still
 * declares `ok(schema)` for OpenAPI.
 */
export const respond = <A>(
  _schema: Schema.Schema<A, A, never>,
  data: A,
  status = 200
): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
  Effect.map(FiberRef.get(currentMeta), (meta) => jsonText(JSON.stringify({ data, error: null, meta }), status))

/**
 * `respond` for data already in its JSON text (`dataJson`, e.g. assembled from memoised parts): the
 * same text as `JSON.stringify({ data, error: null, meta })` of the parsed data, and the same response.
 */
export const respondJson = (dataJson: string, status = 200): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
  Effect.map(
    FiberRef.get(currentMeta),
    (meta) => jsonText(`{"data":${dataJson},"error":null,"meta":${JSON.stringify(meta)}}`, status)
  )

export const ErrorObject = Schema.Struct({
  message: Schema.String,
  code: ErrorCode,
  retryable: Schema.Boolean,
  details: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
}).annotations({ identifier: "Error" })
export type ErrorObject = typeof ErrorObject.Type

export const ErrorEnvelope = Schema.Struct({
  data: Schema.Null,
  error: ErrorObject,
  meta: Meta
}).annotations({ identifier: "ErrorEnvelope" })
export type ErrorEnvelope = typeof ErrorEnvelope.Type

/** The most characters of an offending value an error body quotes. */
export const quotedPrefix = 100

/** Strings longer than this in an error body are cut to `quotedPrefix` characters, whatever they hold. */
export const maxErrorString = 1_000

const schemaActual = ", actual "

/**
 * A string of an error body with any offending value it quotes cut to its first 100 characters: the
 * value after a schema message's `, actual ` (`Expected number, actual "aaaa…"`), or the whole string
 * when it is longer than 1,000 characters (no message of Herald's own is).
 */
export const clip = (text: string): string => {
  const actual = text.indexOf(schemaActual)
  if (actual >= 0) {
    const start = actual + schemaActual.length
    if (text.length - start > quotedPrefix) {
      return `${text.slice(0, start + quotedPrefix)}… (${text.length - start} characters)`
    }
  }
  return text.length > maxErrorString ? `${text.slice(0, quotedPrefix)}… (${text.length} characters)` : text
}

/** `details` with every string in its plain objects and arrays clipped (`clip`); iterative. */
const clipDetails = (details: Record<string, unknown>): Record<string, unknown> => {
  const isPlain = (value: unknown): value is object =>
    Array.isArray(value) ||
    (typeof value === "object" && value !== null &&
      (Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null))
  const root: Record<string, unknown> = {}
  const stack: Array<{ readonly from: unknown; readonly into: Record<string, unknown> | Array<unknown> }> = [
    { from: details, into: root }
  ]
  while (stack.length > 0) {
    const { from, into } = stack.pop()!
    const entries: Array<[string | number, unknown]> = Array.isArray(from)
      ? from.map((v, i) => [i, v])
      : Object.entries(from as Record<string, unknown>)
    for (const [key, value] of entries) {
      let out: unknown = typeof value === "string" ? clip(value) : value
      if (isPlain(value)) {
        out = Array.isArray(value) ? [] : {}
        stack.push({ from: value, into: out as Record<string, unknown> | Array<unknown> })
      }
      ;(into as Record<string | number, unknown>)[key] = out
    }
  }
  return root
}

export const errorObject = (error: DomainError): ErrorObject => ({
  message: clip(error.message),
  code: error.code,
  retryable: ErrorCatalogue.retryableOf(error),
  ...(error.details === undefined ? {} : { details: clipDetails(error.details) })
})

export const errorBody = (error: DomainError, meta: Meta): ErrorEnvelope => ({
  data: null,
  error: errorObject(error),
  meta
})

/**
 * A documented error response with status `status`, whose value is a `DomainError`. Only for the
 * API description: at run time every error body is built by `errorBody` in the request middleware.
 * Response descriptions per status are set in `OpenApiDocument`.
 */
export const errorResponse = (status: number) =>
  Schema.transform(ErrorEnvelope, Schema.typeSchema(DomainError), {
    strict: true,
    decode: (envelope) => DomainError.of(envelope.error.code, envelope.error.message, envelope.error.details, status),
    encode: (error) => errorBody(error, { request_id: "", timestamp: "" })
  }).annotations(HttpApiSchema.annotations({ status, identifier: "ErrorEnvelope" }))

export const AuthErrorEnvelope = Schema.Struct({
  data: Schema.Null,
  error: Schema.Struct({
    message: Schema.String,
    code: Schema.Literal(
      "invalid_api_key",
      "api_key_revoked",
      "api_key_expired",
      "api_key_required",
      "subscription_required"
    ),
    subscription_status: Schema.optional(
      Schema.String.annotations({ description: "Only on 402 subscription_required" })
    )
  }),
  meta: Schema.Struct({ timestamp: Schema.String })
}).annotations({ identifier: "AuthErrorEnvelope" })
export type AuthErrorEnvelope = typeof AuthErrorEnvelope.Type

export const authBody = (options: {
  readonly code: AuthErrorEnvelope["error"]["code"]
  readonly message: string
  readonly timestamp: string
  readonly subscriptionStatus?: string | undefined
}): AuthErrorEnvelope => ({
  data: null,
  error: {
    message: options.message,
    code: options.code,
    ...(options.subscriptionStatus === undefined ? {} : { subscription_status: options.subscriptionStatus })
  },
  meta: { timestamp: options.timestamp }
})
