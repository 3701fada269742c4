import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/**
 * Every error code of the spec's Errors section (and the auth section), plus the dashboard's own
 * (`invalid_token`, `invalid_credentials`, `session_required`, `forbidden`, `csrf_failed`,
 * `too_many_attempts`), which only cookie-authenticated requests and /dashboard/api/* can receive,
 * and the `Idempotency-Key` header's (`idempotency_key_in_use`, `idempotency_key_mismatch`).
 */
export const errorCodes = [
  // 400
  "validation_error",
  "invalid_json",
  "invalid_id",
  "invalid_field_name",
  "content_too_long",
  "too_many_accounts",
  "invalid_timezone",
  "invalid_accounts",
  "invalid_datetime",
  "past_schedule_time",
  "invalid_post_status",
  "no_failed_destinations",
  "unsupported_media_type",
  "file_too_large",
  "upload_failed",
  "file_not_uploaded",
  "file_type_mismatch",
  "bulk_limit_exceeded",
  "no_filter",
  "invalid_period",
  "invalid_range",
  "invalid_event_type",
  "limit_reached",
  "prompt_rejected",
  "misconfig",
  "media_not_ready",
  "invalid_token",
  // 401
  "invalid_api_key",
  "api_key_revoked",
  "api_key_expired",
  "api_key_required",
  "auth_failed",
  "invalid_credentials",
  "session_required",
  // 402
  "insufficient_credits",
  "upgrade_required",
  "subscription_required",
  // 403
  "insufficient_scope",
  "forbidden",
  "csrf_failed",
  // 404
  "not_found",
  // 409
  "idempotency_key_in_use",
  // 422
  "permanent_failure_circuit_breaker",
  "idempotency_key_mismatch",
  // 429
  "rate_limit_exceeded",
  "post_limit_reached",
  "daily_limit_reached",
  "too_many_attempts",
  // 500
  "generation_failed",
  "service_unavailable",
  "internal_error"
] as const

export const ErrorCode = Schema.Literal(...errorCodes)
export type ErrorCode = typeof ErrorCode.Type

/**
 * A failure the API reports to its caller: a spec error code, a message a person can act on, and
 * optional details. The HTTP layer maps the code to its status; `status` overrides it where the spec
 * names another status for one endpoint (409 when scheduling a post that is not a draft).
 */
export class DomainError extends Schema.TaggedError<DomainError>()("DomainError", {
  code: ErrorCode,
  message: Schema.String,
  details: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  status: Schema.optional(Schema.Int)
}) {
  static of(
    code: ErrorCode,
    message: string,
    details?: Record<string, unknown>,
    status?: number
  ): DomainError {
    return new DomainError({
      code,
      message,
      ...(details === undefined ? {} : { details }),
      ...(status === undefined ? {} : { status })
    })
  }

  static fail(code: ErrorCode, message: string, details?: Record<string, unknown>, status?: number) {
    return Effect.fail(DomainError.of(code, message, details, status))
  }

  static notFound(what: string) {
    return Effect.fail(DomainError.of("not_found", `${what} not found`))
  }
}

/** A storage failure; adapters wrap their driver errors in it, so no driver error leaks past a port. */
export class PersistenceError extends Schema.TaggedError<PersistenceError>()("PersistenceError", {
  message: Schema.String,
  cause: Schema.Defect
}) {
  static refail<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, PersistenceError, R> {
    return Effect.mapError(self, (cause) => new PersistenceError({ message: "storage operation failed", cause }))
  }
}
