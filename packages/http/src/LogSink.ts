/**
 * Where the server's log lines go: stderr, in logfmt, one line per entry (one per request), written
 * in batches. Writing each line through `console.error` cost a formatting pass and a synchronous
 * `write(2)` on the pipe per request (a quarter of the CPU of a `GET /health/live`); lines are now
 * appended to a buffer that is written once per turn of the event loop (`setImmediate`), or at once
 * when it passes 64 KiB, and on `process.on("exit")` (a normal exit, `process.exit`, and an uncaught
 * exception all pass there), so no line is lost at shutdown. Only a `kill -9` can lose the lines of
 * the current turn, which were not yet answered to anyone either way but by microseconds.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Inspectable from "effect/Inspectable"
import * as Logger from "effect/Logger"

/** Buffer size at which lines are written without waiting for the end of the turn. */
export const highWaterChars = 64 * 1024

export interface Sink {
  /** Adds one line (without its newline). */
  readonly add: (line: string) => void
  /** Writes what is buffered now. */
  readonly flush: () => void
}

/** A sink over `write`, flushed at the end of each turn of the event loop and when large. */
export const make = (write: (chunk: string) => void): Sink => {
  let pending: Array<string> = []
  let size = 0
  let scheduled = false
  const flush = () => {
    scheduled = false
    if (pending.length === 0) return
    const chunk = pending.join("\n") + "\n"
    pending = []
    size = 0
    write(chunk)
  }
  const add = (line: string) => {
    pending.push(line)
    size += line.length + 1
    if (size >= highWaterChars) flush()
    else if (!scheduled) {
      scheduled = true
      setImmediate(flush)
    }
  }
  return { add, flush }
}

let stderrSink: Sink | undefined

/** The process's stderr sink: created once, flushed on exit. */
export const stderr = (): Sink => {
  if (stderrSink === undefined) {
    // process.stderr writes synchronously to files, TTYs and (on Linux) pipes.
    const sink = make((chunk) => void process.stderr.write(chunk))
    process.on("exit", sink.flush)
    stderrSink = sink
  }
  return stderrSink
}

/** Effect's logfmt logger, written to stderr through the batching sink. */
export const logfmtToStderr: Logger.Logger<unknown, void> = Logger.map(Logger.logfmtLogger, (line) => {
  stderr().add(line)
})

/** `HERALD_LOG_FORMAT`: `logfmt` (the default) or `json`. */
export type Format = "logfmt" | "json"

export const formats: ReadonlyArray<Format> = ["logfmt", "json"]

/** The format `HERALD_LOG_FORMAT` names (case-insensitive); logfmt when unset, blank or unknown. */
export const formatFrom = (value: string | undefined): Format =>
  value?.trim().toLowerCase() === "json" ? "json" : "logfmt"

/**
 * Annotation keys whose values are credentials: written as `<redacted>` should one ever be annotated
 * (handlers are told never to), as a second line of defence.
 */
const secretKeys: ReadonlySet<string> = new Set([
  "password",
  "token",
  "access_token",
  "refresh_token",
  "bot_token",
  "app_password",
  "client_secret",
  "secret",
  "api_key",
  "authorization",
  "cookie",
  "webhook_url"
])

/**
 * Credentials recognisable in free text: Herald's API keys, webhook secrets, bearer and basic
 * authorization values. Replaced in messages and causes (a platform's error text may quote a request).
 */
const secretPatterns: ReadonlyArray<RegExp> = [
  /\bpe_(?:live|test)_[0-9a-f]{32}\b/g,
  /\bwhsec_[A-Za-z0-9+/=]{16,}/g,
  /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi
]

const scrub = (text: string): string => {
  let out = text
  for (const pattern of secretPatterns) {
    out = out.replace(
      pattern,
      (_match, scheme?: string) => (typeof scheme === "string" ? `${scheme} <redacted>` : "<redacted>")
    )
  }
  return out
}

const fieldValue = (value: unknown): unknown =>
  typeof value === "number" || typeof value === "boolean" || value === null
    ? value
    : scrub(typeof value === "string" ? value : Inspectable.toStringUnknown(value))

const levelNames: Readonly<Record<string, string>> = {
  All: "all",
  Trace: "trace",
  Debug: "debug",
  Info: "info",
  Warning: "warning",
  Error: "error",
  Fatal: "fatal",
  None: "none"
}

/**
 * One log entry as one line of JSON: `timestamp`, `level`, `message`, then the fiber's annotations
 * at the top level (`request_id`, `post_id`, `destination_id`, `platform`, `duration_ms`, ...), and
 * `cause` when the entry carries one. The entry's own fields win over an annotation of the same
 * name; credentials are redacted by key and by shape.
 */
export const jsonLine = (options: Logger.Logger.Options<unknown>): string => {
  const message = Array.isArray(options.message)
    ? options.message.map((m) => Inspectable.toStringUnknown(m)).join(" ")
    : Inspectable.toStringUnknown(options.message)
  const entry: Record<string, unknown> = {
    timestamp: options.date.toISOString(),
    level: levelNames[options.logLevel._tag] ?? options.logLevel.label.toLowerCase(),
    message: scrub(message)
  }
  for (const [key, value] of HashMap.toEntries(options.annotations)) {
    if (key in entry) continue
    entry[key] = secretKeys.has(key.toLowerCase()) ? "<redacted>" : fieldValue(value)
  }
  if (!Cause.isEmpty(options.cause)) entry["cause"] = scrub(Cause.pretty(options.cause, { renderErrorCause: true }))
  return JSON.stringify(entry)
}

/** `jsonLine` written to stderr through the batching sink. */
export const jsonToStderr: Logger.Logger<unknown, void> = Logger.make((options) => {
  stderr().add(jsonLine(options))
})

/** The stderr logger of `format`. */
export const toStderr = (format: Format): Logger.Logger<unknown, void> =>
  format === "json" ? jsonToStderr : logfmtToStderr

/** The default logger replaced by the stderr logger `HERALD_LOG_FORMAT` names (read when built). */
export const layerFromEnv = Logger.replaceEffect(
  Logger.defaultLogger,
  Effect.sync(() => toStderr(formatFrom(process.env.HERALD_LOG_FORMAT)))
)
