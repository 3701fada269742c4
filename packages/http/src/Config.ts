/**
 * The start-up gate over Herald's environment variables (`herald serve`, `herald worker`): every
 * variable that is set is checked before anything listens or claims, and each wrong one is named in
 * one line (`NAME: expected ..., got '...'`). The modules keep reading their own settings; this only
 * refuses values they would silently default or fail on deep inside. Unset and empty (or blank)
 * variables are left to the modules' defaults. Secret values are never echoed: only the name.
 */

/** A check: undefined when the (trimmed, non-empty) value is acceptable, else what was expected. */
type Check = (value: string) => string | undefined

const test = (ok: (value: string) => boolean, expected: string): Check => (value) => ok(value) ? undefined : expected

const integer = /^\d+$/
const decimal = /^\d+(\.\d+)?$/

export const positiveInteger: Check = test(
  (v) => integer.test(v) && Number(v) > 0 && Number.isSafeInteger(Number(v)),
  "a positive integer"
)
export const nonNegativeInteger: Check = test(
  (v) => integer.test(v) && Number.isSafeInteger(Number(v)),
  "a non-negative integer"
)
export const positiveNumber: Check = test((v) => decimal.test(v) && Number(v) > 0, "a positive number")
export const port: Check = test((v) => integer.test(v) && Number(v) <= 65535, "a port number (0-65535)")
export const host: Check = test((v) => !/\s/.test(v), "a host name or address")
/** `HERALD_LOG_LEVEL` (read by `herald worker`). */
export const logLevel: Check = test(
  (v) => ["debug", "info", "warning", "error", "none"].includes(v.toLowerCase()),
  "one of debug, info, warning, error, none"
)
/** `HERALD_LOG_FORMAT` (`herald serve`, `herald worker` and the admin commands). */
export const logFormat: Check = test((v) => ["logfmt", "json"].includes(v.toLowerCase()), "one of logfmt, json")
/** `OTEL_EXPORTER_OTLP[_TRACES]_PROTOCOL`: the OTLP/HTTP encodings the exporter speaks (no gRPC). */
export const otlpProtocol: Check = test(
  (v) => ["http/protobuf", "http/json"].includes(v),
  "one of http/protobuf, http/json"
)
export const boolean: Check = test((v) => ["true", "false"].includes(v.toLowerCase()), "true or false")

const parsesAs = (value: string, protocols: ReadonlyArray<string>): boolean => {
  try {
    return protocols.includes(new URL(value).protocol)
  } catch {
    return false
  }
}

export const httpUrl: Check = test((v) => parsesAs(v, ["http:", "https:"]), "an http(s) URL")
export const postgresUrl: Check = test((v) => parsesAs(v, ["postgres:", "postgresql:"]), "a postgres:// URL")
export const smtpUrl: Check = test((v) => parsesAs(v, ["smtp:", "smtps:"]), "an smtp:// or smtps:// URL")
/** `HERALD_METRICS_SCHEDULE`: comma-separated durations such as `1h,6h,1d` (units s, m, h, d). */
export const durationList: Check = test(
  (v) => v.split(",").map((p) => p.trim()).every((p) => /^\d+(\.\d+)?[smhd]$/.test(p) && parseFloat(p) > 0),
  "comma-separated durations such as 1h,6h,1d"
)

/** `HERALD_S3_BUCKET`: the names S3, R2, MinIO and B2 accept (letters, digits, `.`, `-`, `_`). */
export const bucketName: Check = test(
  (v) => /^[A-Za-z0-9][A-Za-z0-9._-]{1,254}$/.test(v),
  "a bucket name (letters, digits, '.', '-', '_')"
)
/** `HERALD_S3_REGION`, e.g. `us-east-1`, or `auto` (R2). */
export const regionName: Check = test((v) => /^[A-Za-z0-9-]+$/.test(v), "a region name such as us-east-1")
/** `HERALD_S3_PREFIX`: key segments joined by `/`, e.g. `herald/media`. */
export const keyPrefix: Check = test(
  (v) => /^\/?[A-Za-z0-9_-][A-Za-z0-9._-]*(?:\/[A-Za-z0-9_-][A-Za-z0-9._-]*)*\/?$/.test(v),
  "key segments of letters, digits, '.', '_', '-' joined by '/'"
)
/** `HERALD_S3_LINKS`: who signs media links. */
export const linkMode: Check = test((v) => ["herald", "presigned"].includes(v.toLowerCase()), "herald or presigned")
/** Any value (a credential's shape is the service's business); listed so its value is never printed. */
const anyValue: Check = () => undefined

interface Variable {
  readonly check: Check
  /** Its value is never printed (keys, secrets, URLs that may carry a password). */
  readonly secret?: boolean
}

/** Every variable `herald serve` and `herald worker` read whose value has a shape to check. */
export const variables: Readonly<Record<string, Variable>> = {
  PORT: { check: port },
  HERALD_HOST: { check: host },
  HERALD_DATABASE_URL: { check: postgresUrl, secret: true },
  HERALD_SQLITE_READERS: { check: nonNegativeInteger },
  HERALD_RATE_LIMIT_PER_MINUTE: { check: nonNegativeInteger },
  HERALD_RATE_LIMIT_PER_HOUR: { check: nonNegativeInteger },
  HERALD_PUBLIC_URL: { check: httpUrl },
  HERALD_MEDIA_PUBLIC_URL: { check: httpUrl },
  HERALD_MEDIA_LINK_TTL_SECONDS: { check: positiveInteger },
  HERALD_MEDIA_UPLOADS_PER_HOUR: { check: positiveInteger },
  HERALD_MEDIA_UPLOADS_PER_DAY: { check: positiveInteger },
  HERALD_MEDIA_PENDING_GRACE_HOURS: { check: positiveNumber },
  HERALD_MEDIA_ALLOW_PRIVATE: { check: boolean },
  HERALD_WEBHOOKS_ALLOW_PRIVATE: { check: boolean },
  HERALD_TRACING: { check: boolean },
  HERALD_HOUSEKEEPING_MINUTES: { check: positiveNumber },
  HERALD_WEBHOOK_HISTORY_DAYS: { check: positiveNumber },
  HERALD_WEBHOOK_HISTORY_MAX: { check: positiveNumber },
  HERALD_EVENT_HISTORY_DAYS: { check: positiveNumber },
  HERALD_COUNTER_HISTORY_HOURS: { check: positiveNumber },
  HERALD_HOUSEKEEPING_BATCH: { check: positiveInteger },
  HERALD_METRICS_SWEEP_SECONDS: { check: positiveNumber },
  HERALD_METRICS_SCHEDULE: { check: durationList },
  HERALD_SHUTDOWN_TIMEOUT_SECONDS: { check: positiveNumber },
  HERALD_DEVICE_CODE_TTL_SECONDS: { check: positiveInteger },
  HERALD_DEVICE_POLL_INTERVAL_SECONDS: { check: positiveInteger },
  HERALD_DEVICE_RATE_LIMIT_PER_MINUTE: { check: positiveInteger },
  HERALD_DEVICE_TOKEN_RATE_LIMIT_PER_MINUTE: { check: positiveInteger },
  HERALD_SESSION_IDLE_SECONDS: { check: positiveInteger },
  HERALD_SESSION_ABSOLUTE_SECONDS: { check: positiveInteger },
  HERALD_SIGN_IN_LIMIT_PER_MINUTE: { check: positiveInteger },
  HERALD_SIGN_IN_FAILURES_PER_HOUR: { check: positiveInteger },
  HERALD_SANDBOX_LATENCY_MS: { check: nonNegativeInteger },
  HERALD_LOG_LEVEL: { check: logLevel },
  HERALD_LOG_FORMAT: { check: logFormat },
  HERALD_AI_BASE_URL: { check: httpUrl },
  HERALD_AI_TIMEOUT_SECONDS: { check: positiveNumber },
  HERALD_BLUESKY_SERVICE_URL: { check: httpUrl },
  HERALD_S3_BUCKET: { check: bucketName },
  HERALD_S3_ENDPOINT: { check: httpUrl },
  HERALD_S3_REGION: { check: regionName },
  HERALD_S3_PREFIX: { check: keyPrefix },
  HERALD_S3_ACCESS_KEY_ID: { check: anyValue },
  HERALD_S3_SECRET_ACCESS_KEY: { check: anyValue, secret: true },
  HERALD_S3_FORCE_PATH_STYLE: { check: boolean },
  HERALD_S3_LINKS: { check: linkMode },
  // Notification e-mails (Worker.mailFromEnv): the URL may carry the SMTP password.
  HERALD_SMTP_URL: { check: smtpUrl, secret: true },
  // Trace export (OtlpTracing): the standard OpenTelemetry variables Herald reads.
  OTEL_EXPORTER_OTLP_ENDPOINT: { check: httpUrl },
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: { check: httpUrl },
  OTEL_EXPORTER_OTLP_PROTOCOL: { check: otlpProtocol },
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: { check: otlpProtocol },
  OTEL_BSP_SCHEDULE_DELAY: { check: positiveInteger },
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: { check: positiveInteger }
}

const isSet = (env: Readonly<Record<string, string | undefined>>, name: string): boolean =>
  (env[name]?.trim() ?? "") !== ""

/** Variables that only make sense together: one line per combination that does not hold. */
const combinations = (env: Readonly<Record<string, string | undefined>>): Array<string> => {
  const lines: Array<string> = []
  const s3 = Object.keys(env).filter((name) => name.startsWith("HERALD_S3_") && isSet(env, name))
  if (s3.length > 0 && !isSet(env, "HERALD_S3_BUCKET")) {
    lines.push(
      `HERALD_S3_BUCKET: expected a bucket name, since ${s3.sort().join(", ")} ${s3.length === 1 ? "is" : "are"} set`
    )
  }
  if (isSet(env, "HERALD_SMTP_URL") && !isSet(env, "HERALD_MAIL_FROM")) {
    lines.push("HERALD_MAIL_FROM: expected the From address of notification e-mails, since HERALD_SMTP_URL is set")
  }
  if (isSet(env, "HERALD_S3_ACCESS_KEY_ID") !== isSet(env, "HERALD_S3_SECRET_ACCESS_KEY")) {
    lines.push(
      "HERALD_S3_ACCESS_KEY_ID, HERALD_S3_SECRET_ACCESS_KEY: expected both or neither " +
        "(neither: the AWS SDK's own chain, e.g. AWS_ACCESS_KEY_ID or an instance role)"
    )
  }
  return lines
}

/** Platform endpoint overrides (`HERALD_X_API_URL`, `HERALD_YOUTUBE_TOKEN_URL`, ...): http(s) URLs. */
const endpointOverride = /^HERALD_[A-Z0-9]+_(API|VIDEO_API|AUTHORIZE|OAUTH|TOKEN|UPLOAD|SERVICE)_URL$/

/** Whether a variable's value must never be printed. */
export const isSecret = (name: string): boolean =>
  variables[name]?.secret === true || name === "HERALD_SECRET" || name === "HERALD_AI_API_KEY" ||
  name.endsWith("_CLIENT_SECRET") || name.endsWith("_API_KEY") || name.endsWith("_TOKEN") || name.endsWith("_HEADERS")

const checkFor = (name: string): Check | undefined =>
  variables[name]?.check ?? (endpointOverride.test(name) ? httpUrl : undefined)

/**
 * One line per wrong variable, in the environment's order, then one per combination that does not
 * hold; empty when every set variable is fine.
 */
export const problems = (env: Readonly<Record<string, string | undefined>>): Array<string> => {
  const lines: Array<string> = []
  for (const [name, raw] of Object.entries(env)) {
    const check = checkFor(name)
    const value = raw?.trim()
    if (check === undefined || value === undefined || value === "") continue
    const expected = check(value)
    if (expected === undefined) continue
    lines.push(
      isSecret(name) ? `${name}: expected ${expected} (value not shown)` : `${name}: expected ${expected}, got '${raw}'`
    )
  }
  return [...lines, ...combinations(env)]
}
