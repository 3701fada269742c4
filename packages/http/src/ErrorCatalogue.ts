/**
 * The one table from error code to HTTP status and retryability. Every error response the server
 * sends takes its status and `retryable` from here (a `DomainError.status` overrides the status only).
 */
import type { DomainError, ErrorCode } from "@herald/core/kernel/Errors"

export interface CatalogueEntry {
  readonly status: number
  readonly retryable: boolean
}

const entry = (status: number): CatalogueEntry => ({ status, retryable: status === 429 || status >= 500 })

export const catalogue: Record<ErrorCode, CatalogueEntry> = {
  validation_error: entry(400),
  invalid_json: entry(400),
  invalid_id: entry(400),
  invalid_field_name: entry(400),
  content_too_long: entry(400),
  too_many_accounts: entry(400),
  invalid_timezone: entry(400),
  invalid_accounts: entry(400),
  invalid_datetime: entry(400),
  past_schedule_time: entry(400),
  invalid_post_status: entry(400),
  no_failed_destinations: entry(400),
  unsupported_media_type: entry(400),
  file_too_large: entry(400),
  upload_failed: entry(400),
  file_not_uploaded: entry(400),
  file_type_mismatch: entry(400),
  bulk_limit_exceeded: entry(400),
  no_filter: entry(400),
  invalid_period: entry(400),
  invalid_range: entry(400),
  invalid_event_type: entry(400),
  limit_reached: entry(400),
  prompt_rejected: entry(400),
  misconfig: entry(400),
  media_not_ready: entry(400),
  invalid_token: entry(400),
  invalid_api_key: entry(401),
  api_key_revoked: entry(401),
  api_key_expired: entry(401),
  api_key_required: entry(401),
  auth_failed: entry(401),
  invalid_credentials: entry(401),
  session_required: entry(401),
  insufficient_credits: entry(402),
  upgrade_required: entry(402),
  subscription_required: entry(402),
  insufficient_scope: entry(403),
  forbidden: entry(403),
  csrf_failed: entry(403),
  not_found: entry(404),
  // The first request with the key is still running: retrying shortly gets its answer.
  idempotency_key_in_use: { status: 409, retryable: true },
  permanent_failure_circuit_breaker: entry(422),
  idempotency_key_mismatch: entry(422),
  rate_limit_exceeded: entry(429),
  post_limit_reached: entry(429),
  daily_limit_reached: entry(429),
  too_many_attempts: entry(429),
  generation_failed: entry(500),
  service_unavailable: entry(500),
  internal_error: entry(500)
}

export const lookup = (code: ErrorCode): CatalogueEntry => catalogue[code]

/**
 * The status of one error: the catalogue's unless the error names another (409 for scheduling a
 * post that is not a draft). `retryable` always follows the code, never the override.
 */
export const statusOf = (error: DomainError): number => error.status ?? catalogue[error.code].status

export const retryableOf = (error: DomainError): boolean => catalogue[error.code].retryable
