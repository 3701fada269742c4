/**
 * Which storage failures mean "the store cannot be reached or written just now" (retry later), as
 * opposed to a fault of the statement itself. The HTTP layer answers the former with the spec's
 * retryable `service_unavailable` instead of `internal_error`, and readiness reports them.
 *
 * The failure is recognised by the driver's own codes anywhere in the chain of causes
 * (`PersistenceError` -> `SqlError` -> the driver's error):
 * - Node socket errors on the way to Postgres (refused, reset, unreachable, timed out, DNS).
 * - Postgres SQLSTATE classes 08 (connection exception) and 53 (insufficient resources: disk full,
 *   out of memory, too many connections), 57P01-57P03 (shut down, crashed, starting up), 25006 (a
 *   read-only transaction, e.g. a standby), and node-postgres's messages for a dropped connection.
 * - SQLite's full, read-only, I/O, busy/locked and cannot-open results.
 * - The file system's full, read-only and quota errors.
 *
 * An Effect `Cause` in the chain (a batch that failed every waiter with the cause of its one
 * statement) is followed into its failures and defects.
 */
import { Cause } from "effect"

const nodeCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ENOSPC",
  "EROFS",
  "EDQUOT"
])

const pgCodes = new Set(["57P01", "57P02", "57P03", "25006"])

const pgMessages = [
  "Connection terminated",
  "connection timed out",
  "timeout exceeded when trying to connect",
  "Client has encountered a connection error and is not queryable",
  "Client was closed and is not queryable",
  "PgClient: Connection timed out"
]

const isUnavailableCode = (code: string): boolean =>
  nodeCodes.has(code) ||
  pgCodes.has(code) ||
  /^(08|53)[0-9A-Z]{3}$/.test(code) ||
  /^SQLITE_(FULL|READONLY|IOERR|BUSY|LOCKED|CANTOPEN|PROTOCOL)(_|$)/.test(code)

const field = (value: object, name: string): unknown => (value as Record<string, unknown>)[name]

/** Whether `error` (or any cause it carries) says the store cannot be reached or written. */
export const isStoreUnavailable = (error: unknown): boolean => {
  const seen = new Set<unknown>()
  let current: unknown = error
  while (typeof current === "object" && current !== null && !seen.has(current)) {
    seen.add(current)
    if (Cause.isCause(current)) {
      return [...Cause.failures(current), ...Cause.defects(current)].some(isStoreUnavailable)
    }
    const code = field(current, "code")
    if (typeof code === "string" && isUnavailableCode(code)) return true
    const message = field(current, "message")
    if (typeof message === "string" && pgMessages.some((m) => message.includes(m))) return true
    // AggregateError (a connect to every address of a host failed).
    const errors = field(current, "errors")
    if (Array.isArray(errors) && errors.some(isStoreUnavailable)) return true
    current = field(current, "cause")
  }
  return false
}
