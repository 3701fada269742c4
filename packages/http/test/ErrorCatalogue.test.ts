import { DomainError, errorCodes } from "@herald/core/kernel/Errors"
import { describe, expect, it } from "vitest"
import * as ErrorCatalogue from "../src/ErrorCatalogue.js"

/** Codes of the `Idempotency-Key` header, which the spec does not have (docs/decisions/api.md, "Idempotency-Key on create endpoints"). */
const headerCodes: ReadonlyArray<string> = ["idempotency_key_in_use", "idempotency_key_mismatch"]

describe("error catalogue", () => {
  it("gives every spec code a status, retryable exactly for 429 and 5xx", () => {
    for (const code of errorCodes.filter((c) => !headerCodes.includes(c))) {
      const { retryable, status } = ErrorCatalogue.lookup(code)
      expect([400, 401, 402, 403, 404, 422, 429, 500]).toContain(status)
      expect(retryable, code).toBe(status === 429 || status >= 500)
    }
  })

  it("the Idempotency-Key header's own codes: in use is a transient 409, another request a permanent 422", () => {
    expect(ErrorCatalogue.lookup("idempotency_key_in_use")).toEqual({ status: 409, retryable: true })
    expect(ErrorCatalogue.lookup("idempotency_key_mismatch")).toEqual({ status: 422, retryable: false })
  })

  it("maps the spec's named codes to the spec's statuses", () => {
    expect(ErrorCatalogue.lookup("validation_error").status).toBe(400)
    expect(ErrorCatalogue.lookup("api_key_expired").status).toBe(401)
    expect(ErrorCatalogue.lookup("subscription_required").status).toBe(402)
    expect(ErrorCatalogue.lookup("insufficient_scope").status).toBe(403)
    expect(ErrorCatalogue.lookup("not_found").status).toBe(404)
    expect(ErrorCatalogue.lookup("permanent_failure_circuit_breaker")).toEqual({ status: 422, retryable: false })
    expect(ErrorCatalogue.lookup("daily_limit_reached")).toEqual({ status: 429, retryable: true })
    expect(ErrorCatalogue.lookup("service_unavailable")).toEqual({ status: 500, retryable: true })
  })

  it("lets an error override its status but never its retryability", () => {
    const error = DomainError.of("no_failed_destinations", "nothing failed", undefined, 409)
    expect(ErrorCatalogue.statusOf(error)).toBe(409)
    expect(ErrorCatalogue.retryableOf(error)).toBe(false)
    expect(ErrorCatalogue.statusOf(DomainError.of("no_failed_destinations", "nothing failed"))).toBe(400)
  })
})
