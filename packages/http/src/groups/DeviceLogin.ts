/**
 * Device login, the two endpoints that need no API key (`POST /auth/device`, `POST /auth/device/token`
 * under /api/v1), and where the verification page `GET /device` they point a person to is. Both endpoints are
 * rate-limited per client address (429 `rate_limit_exceeded`). The page itself is the dashboard's
 * (`Dashboard.pagePaths`): a signed-in owner or admin approves or denies the code there.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as OpenApi from "@effect/platform/OpenApi"
import * as DeviceLogin from "@herald/core/access/DeviceLogin"
import { DomainError } from "@herald/core/kernel/Errors"
import { UsageCounters } from "@herald/core/access/UsageCounters"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as ApiGroup from "../ApiGroup.js"
import * as Envelope from "../Envelope.js"
import * as RateLimit from "../RateLimit.js"

// wire shapes

export const DeviceAuthorizationRequest = Schema.Struct({
  client_name: Schema.optional(
    Schema.String.pipe(Schema.maxLength(100)).annotations({
      description: "Shown to the person approving, and part of the new key's name (`device: <client_name>`)"
    })
  )
}).annotations({ identifier: "DeviceAuthorizationRequest" })

export const DeviceAuthorization = Schema.Struct({
  device_code: Schema.String.annotations({ description: "Secret; poll POST /auth/device/token with it" }),
  user_code: Schema.String.annotations({ description: "XXXX-XXXX, letters from BCDFGHJKLMNPQRSTVWXZ" }),
  verification_uri: Schema.String,
  verification_uri_complete: Schema.String,
  interval: Schema.Int.annotations({ description: "Minimum seconds between two polls" }),
  expires_in: Schema.Int.annotations({ description: "Seconds until both codes expire" }),
  client_name: Schema.NullOr(Schema.String)
}).annotations({ identifier: "DeviceAuthorization" })

export const DeviceTokenRequest = Schema.Struct({
  device_code: Schema.String.pipe(Schema.minLength(1)),
  grant_type: Schema.optional(
    Schema.String.annotations({ description: "Accepted and ignored (RFC 8628 clients send it)" })
  )
}).annotations({ identifier: "DeviceTokenRequest" })

const Waiting = Schema.Struct({
  status: Schema.Literal("pending", "slow_down"),
  interval: Schema.Int.annotations({ description: "Seconds to wait before the next poll" })
})

const Ended = Schema.Struct({
  status: Schema.Literal("denied", "expired")
})

const Authorized = Schema.Struct({
  status: Schema.Literal("authorized"),
  api_key: Schema.String.annotations({ description: "The new pe_live_ key, shown only in this response" }),
  key: Schema.Struct({
    id: Schema.String,
    name: Schema.String,
    scopes: Schema.Array(Schema.String)
  }),
  user: Schema.Struct({
    email: Schema.String.annotations({
      description: "The organization's owner (else an admin); operator@localhost when it has no users"
    })
  }),
  organization_id: Schema.String
})

export const DeviceToken = Schema.Union(Waiting, Ended, Authorized).annotations({ identifier: "DeviceToken" })

export const DeviceLoginGroup = HttpApiGroup.make("deviceLogin")
  .add(
    HttpApiEndpoint.post("start", "/auth/device")
      // An empty body (read as JSON null) is a start without a client name.
      .setPayload(ApiGroup.payload(Schema.NullOr(DeviceAuthorizationRequest)))
      .addSuccess(Envelope.ok(DeviceAuthorization))
      .annotate(
        OpenApi.Summary,
        "Start a device login (no API key). Show user_code and verification_uri to the person, then poll " +
          "POST /auth/device/token every `interval` seconds; codes expire after `expires_in` seconds"
      )
  )
  .add(
    HttpApiEndpoint.post("token", "/auth/device/token")
      .setPayload(ApiGroup.payload(DeviceTokenRequest))
      .addSuccess(Envelope.ok(DeviceToken))
      .annotate(
        OpenApi.Summary,
        "Poll a device login (no API key): data.status pending, slow_down, denied, expired, or authorized with " +
          "api_key (shown once; the device code is then spent: 400 validation_error, reason device_code_used)"
      )
  )
  .addError(ApiGroup.errors.badRequest)
  .addError(ApiGroup.errors.tooManyRequests)
  .addError(ApiGroup.errors.internal)
  .prefix(ApiGroup.basePath)

// settings

/** Where the verification page is: HERALD_PUBLIC_URL, else the origin the request was sent to. */
export class VerificationSettings extends Context.Tag("@herald/http/DeviceLogin/VerificationSettings")<
  VerificationSettings,
  { readonly publicUrl: Option.Option<string> }
>() {}

/** Per-address limits of the two endpoints. */
export interface AddressLimits {
  readonly start: RateLimit.Limits
  readonly token: RateLimit.Limits
}

/**
 * A device needs one start and a poll every `interval` (5 s: 12 a minute); the limits leave room for a
 * few devices behind one address, and stop anyone minting codes or guessing device codes in bulk.
 */
export const defaultAddressLimits: AddressLimits = {
  start: { perMinute: 10, perHour: 60 },
  token: { perMinute: 60, perHour: 1000 }
}

export class DeviceAddressLimits extends Context.Tag("@herald/http/DeviceLogin/AddressLimits")<
  DeviceAddressLimits,
  AddressLimits
>() {}

const optionalString = (name: string) =>
  Config.option(Config.string(name)).pipe(Config.map(Option.filter((s) => s.trim() !== "")))

/**
 * From the environment: HERALD_PUBLIC_URL; HERALD_DEVICE_CODE_TTL_SECONDS (600) and
 * HERALD_DEVICE_POLL_INTERVAL_SECONDS (5); HERALD_DEVICE_RATE_LIMIT_PER_MINUTE (10, starts) and
 * HERALD_DEVICE_TOKEN_RATE_LIMIT_PER_MINUTE (60, polls).
 */
export const layerSettingsFromEnv = Layer.effectContext(
  Effect.gen(function*() {
    const publicUrl = yield* optionalString("HERALD_PUBLIC_URL")
    const positive = (name: string, fallback: number) =>
      Config.integer(name).pipe(
        Config.validate({ message: `${name} must be a positive integer`, validation: (n) => n > 0 }),
        Config.withDefault(fallback)
      )
    const lifetimeSeconds = yield* positive(
      "HERALD_DEVICE_CODE_TTL_SECONDS",
      DeviceLogin.defaultSettings.lifetimeSeconds
    )
    const intervalSeconds = yield* positive(
      "HERALD_DEVICE_POLL_INTERVAL_SECONDS",
      DeviceLogin.defaultSettings.intervalSeconds
    )
    const startPerMinute = yield* positive(
      "HERALD_DEVICE_RATE_LIMIT_PER_MINUTE",
      defaultAddressLimits.start.perMinute
    )
    const tokenPerMinute = yield* positive(
      "HERALD_DEVICE_TOKEN_RATE_LIMIT_PER_MINUTE",
      defaultAddressLimits.token.perMinute
    )
    return Context.make(VerificationSettings, { publicUrl }).pipe(
      Context.add(DeviceLogin.DeviceLoginSettings, { lifetimeSeconds, intervalSeconds }),
      Context.add(DeviceAddressLimits, {
        start: { perMinute: startPerMinute, perHour: Math.max(startPerMinute, defaultAddressLimits.start.perHour) },
        token: { perMinute: tokenPerMinute, perHour: Math.max(tokenPerMinute, defaultAddressLimits.token.perHour) }
      })
    )
  })
).pipe(Layer.orDie)

// rate limits per address

const minuteMillis = 60_000
const hourMillis = 3_600_000

const clientAddress = Effect.map(
  HttpServerRequest.HttpServerRequest,
  (request) => Option.getOrElse(request.remoteAddress, () => "unknown")
)

const addressExceeded = (limit: number, resetAt: DateTime.Utc, window: "minute" | "hour", now: DateTime.Utc) =>
  DomainError.of(
    "rate_limit_exceeded",
    `Too many device login requests from this address: the limit is ${limit} per ${window}`,
    {
      limit,
      remaining: 0,
      reset_at: DateTime.formatIso(resetAt),
      retry_after: Math.max(1, Math.ceil((DateTime.toEpochMillis(resetAt) - DateTime.toEpochMillis(now)) / 1000))
    }
  )

/** Counts one request of the client address against the endpoint's windows (minute first, then hour). */
const limitAddress = (endpoint: "start" | "token") =>
  Effect.gen(function*() {
    const limits = Option.getOrElse(
      yield* Effect.serviceOption(DeviceAddressLimits),
      () => defaultAddressLimits
    )[endpoint]
    const counters = yield* UsageCounters
    const address = yield* clientAddress
    const now = yield* DateTime.now
    const minuteEnd = RateLimit.windowEnd(now, minuteMillis)
    const perMinute = yield* counters.increment(`rate:device:${endpoint}:${address}:minute`, minuteEnd, 1)
    if (perMinute > limits.perMinute) {
      return yield* Effect.fail(addressExceeded(limits.perMinute, minuteEnd, "minute", now))
    }
    const hourEnd = RateLimit.windowEnd(now, hourMillis)
    const perHour = yield* counters.increment(`rate:device:${endpoint}:${address}:hour`, hourEnd, 1)
    if (perHour > limits.perHour) return yield* Effect.fail(addressExceeded(limits.perHour, hourEnd, "hour", now))
  })

// handlers

export const verificationPath = "/device"

const verificationUri = Effect.gen(function*() {
  const settings = yield* Effect.serviceOption(VerificationSettings)
  const configured = Option.flatMap(settings, (s) => s.publicUrl)
  if (Option.isSome(configured)) return configured.value.replace(/\/+$/, "") + verificationPath
  const request = yield* HttpServerRequest.HttpServerRequest
  const host = request.headers["host"] ?? "127.0.0.1"
  return `http://${host}${verificationPath}`
})

const dieOnPersistence = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.catchIf(
    self,
    (e): e is Extract<E, { readonly _tag: "PersistenceError" }> =>
      typeof e === "object" && e !== null && "_tag" in e && e._tag === "PersistenceError",
    Effect.die
  ) as Effect.Effect<A, Exclude<E, { readonly _tag: "PersistenceError" }>, R>

export const DeviceLoginLive = HttpApiBuilder.group(
  ApiGroup.apiOf(DeviceLoginGroup),
  "deviceLogin",
  (handlers) =>
    handlers
      .handle("start", ({ payload }) =>
        Effect.gen(function*() {
          yield* limitAddress("start")
          const clientName = Option.fromNullable(payload?.client_name?.trim()).pipe(Option.filter((s) => s !== ""))
          const started = yield* DeviceLogin.start({ clientName })
          const uri = yield* verificationUri
          return {
            device_code: started.deviceCode,
            user_code: started.userCode,
            verification_uri: uri,
            verification_uri_complete: `${uri}?code=${started.userCode}`,
            interval: started.intervalSeconds,
            expires_in: started.expiresInSeconds,
            client_name: Option.getOrNull(started.clientName)
          }
        }).pipe(dieOnPersistence))
      .handle("token", ({ payload }) =>
        Effect.gen(function*() {
          yield* limitAddress("token")
          const result = yield* DeviceLogin.poll(payload.device_code)
          switch (result.status) {
            case "pending":
              return { status: "pending" as const, interval: (yield* currentInterval) }
            case "slow_down":
              return { status: "slow_down" as const, interval: result.intervalSeconds }
            case "denied":
            case "expired":
              return { status: result.status }
            case "authorized":
              return {
                status: "authorized" as const,
                api_key: result.token,
                key: { id: result.key.id, name: result.key.name, scopes: [...result.key.scopes] },
                user: { email: result.email },
                organization_id: result.organizationId
              }
          }
        }).pipe(dieOnPersistence))
).pipe(Layer.provide(layerSettingsFromEnv))

const currentInterval = Effect.map(
  Effect.serviceOption(DeviceLogin.DeviceLoginSettings),
  (s) => Option.getOrElse(s, () => DeviceLogin.defaultSettings).intervalSeconds
)
