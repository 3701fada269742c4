/**
 * Browser sessions over HTTP: the `herald_session` cookie (HttpOnly, SameSite=Lax, Path=/, Secure
 * behind HTTPS), the CSRF rule (a non-GET/HEAD cookie request carries `X-CSRF-Token` and, when it
 * sends an Origin, the server's own origin), the session as an API principal on /api/v1 (implicit
 * scopes read, write, ai; no API-key rate limits), and the middleware of /dashboard/api/*.
 */
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as ApiKey from "@herald/core/access/ApiKey"
import * as Organization from "@herald/core/access/Organization"
import type { OrganizationStore } from "@herald/core/access/OrganizationStore"
import * as Session from "@herald/core/access/Session"
import * as Sessions from "@herald/core/access/Sessions"
import type { SessionStore } from "@herald/core/access/SessionStore"
import * as Users from "@herald/core/access/Users"
import type { UserStore } from "@herald/core/access/UserStore"
import { Crypto } from "@herald/core/kernel/Crypto"
import { DomainError } from "@herald/core/kernel/Errors"
import { ApiKeyId } from "@herald/core/kernel/Ids"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { type Principal, SubscriptionRequired } from "./Auth.js"
import * as Envelope from "./Envelope.js"

export const cookieName = "herald_session"

export type SessionRequirements = SessionStore | UserStore | OrganizationStore | Crypto

// settings

export interface Settings {
  /** HERALD_PUBLIC_URL: the server's own origin for the Origin check, and `Secure` when https. */
  readonly publicUrl: Option.Option<string>
}

export class SessionHttpSettings
  extends Context.Tag("@herald/http/SessionAuth/Settings")<SessionHttpSettings, Settings>()
{}

/**
 * From the environment: HERALD_PUBLIC_URL, HERALD_SESSION_IDLE_SECONDS (43200) and
 * HERALD_SESSION_ABSOLUTE_SECONDS (604800).
 */
export const layerSettingsFromEnv = Layer.effectContext(
  Effect.gen(function*() {
    const publicUrl = yield* Config.option(Config.string("HERALD_PUBLIC_URL")).pipe(
      Config.map(Option.filter((s) => s.trim() !== ""))
    )
    const positive = (name: string, fallback: number) =>
      Config.integer(name).pipe(
        Config.validate({ message: `${name} must be a positive integer`, validation: (n) => n > 0 }),
        Config.withDefault(fallback)
      )
    const idleSeconds = yield* positive("HERALD_SESSION_IDLE_SECONDS", Session.defaultSettings.idleSeconds)
    const absoluteSeconds = yield* positive("HERALD_SESSION_ABSOLUTE_SECONDS", Session.defaultSettings.absoluteSeconds)
    return Context.make(SessionHttpSettings, { publicUrl }).pipe(
      Context.add(Session.SessionSettings, { idleSeconds, absoluteSeconds })
    )
  })
).pipe(Layer.orDie)

const publicUrl = Effect.map(
  Effect.serviceOption(SessionHttpSettings),
  (s) => Option.flatMap(s, (settings) => settings.publicUrl)
)

const sessionSettings = Effect.map(
  Effect.serviceOption(Session.SessionSettings),
  Option.getOrElse(() => Session.defaultSettings)
)

// the request

/** The value of the session cookie, if the request carries one. */
export const sessionToken = (request: HttpServerRequest.HttpServerRequest): Option.Option<string> => {
  const value = request.cookies[cookieName]
  return value === undefined || !/^[0-9a-f]{64}$/.test(value) ? Option.none() : Option.some(value)
}

export const hasSessionCookie = (request: HttpServerRequest.HttpServerRequest): boolean =>
  request.cookies[cookieName] !== undefined

const forwardedHttps = (request: HttpServerRequest.HttpServerRequest): boolean => {
  const proto = request.headers["x-forwarded-proto"]?.split(",")[0]?.trim().toLowerCase()
  const forwarded = request.headers["forwarded"]?.toLowerCase() ?? ""
  return proto === "https" || /(^|[;,\s])proto=https/.test(forwarded)
}

/** Whether the request came over HTTPS (as a proxy reports it) or the public URL is https. */
export const isSecure = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.map(
    publicUrl,
    (url) => forwardedHttps(request) || Option.exists(url, (u) => u.toLowerCase().startsWith("https:"))
  )

/** The server's own origin: HERALD_PUBLIC_URL's, else the scheme and Host the request was sent to. */
export const ownOrigin = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.map(publicUrl, (url) => {
    if (Option.isSome(url)) {
      try {
        return new URL(url.value).origin
      } catch {
        // Checked at start (Config.ts); fall through to the request's own.
      }
    }
    const host = request.headers["host"] ?? ""
    return `${forwardedHttps(request) ? "https" : "http"}://${host}`.toLowerCase()
  })

const csrfFailed = (message: string) => DomainError.of("csrf_failed", message)

const safeMethod = (method: string): boolean => method === "GET" || method === "HEAD"

/** An Origin header, when present, must be the server's own (a foreign page cannot post as the user). */
export const checkOrigin = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    const origin = request.headers["origin"]
    if (origin === undefined) return
    if (origin.toLowerCase() !== (yield* ownOrigin(request))) {
      return yield* Effect.fail(csrfFailed("Cross-origin request refused: the Origin is not this server's"))
    }
  })

/** The CSRF rule for a request authenticated by the cookie `token`. */
export const checkCsrf = (request: HttpServerRequest.HttpServerRequest, token: string) =>
  Effect.gen(function*() {
    if (safeMethod(request.method)) return
    yield* checkOrigin(request)
    const presented = request.headers["x-csrf-token"]
    if (presented === undefined || presented === "") {
      return yield* Effect.fail(csrfFailed("Missing X-CSRF-Token header"))
    }
    const crypto = yield* Crypto
    if (!crypto.timingSafeEqual(presented, yield* Sessions.csrfTokenFor(token))) {
      return yield* Effect.fail(csrfFailed("Wrong X-CSRF-Token"))
    }
  })

// the signed-in caller

/** The signed-in user of a /dashboard/api request, with the cookie token of the session. */
export interface Caller extends Sessions.SignedIn {
  readonly token: string
}

export class CurrentSession extends Context.Tag("@herald/http/CurrentSession")<CurrentSession, Caller>() {}

export const sessionRequired = DomainError.of("session_required", "Sign in first: no valid session")

/** The live session of the request's cookie, CSRF rule applied; 401 `session_required` without one. */
export const authenticate = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    const token = sessionToken(request)
    if (Option.isNone(token)) return yield* Effect.fail(sessionRequired)
    const found = yield* Sessions.resolve(token.value)
    if (Option.isNone(found)) return yield* Effect.fail(sessionRequired)
    yield* checkCsrf(request, token.value)
    return { ...found.value, token: token.value } satisfies Caller
  }).pipe(Effect.catchTag("PersistenceError", Effect.die))

/** Scopes a browser session has on /api/v1 (the spec's Authentication rule 4). */
export const sessionScopes: ReadonlyArray<ApiKey.Scope> = ["read", "write", "ai"]

/**
 * The session as an /api/v1 principal: a key that exists only for this request, with the session's
 * id, every scope, every account, and the user as its creator (so `requested_by` and posting
 * allowances name the user). Nothing counts it against API-key rate limits.
 */
export const principalOf = (caller: Caller): Principal => ({
  key: new ApiKey.ApiKey({
    id: ApiKeyId.make(caller.session.id),
    organizationId: caller.organization.id,
    createdBy: Option.some(caller.user.id),
    name: `browser session (${caller.user.email})`,
    hint: "",
    hash: "",
    scopes: sessionScopes,
    accountIds: Option.none(),
    expiresAt: Option.none(),
    revokedAt: Option.none(),
    createdAt: caller.session.createdAt
  }, true),
  organization: caller.organization,
  session: caller
})

/** /api/v1 with the cookie and no Authorization header. */
export const authenticateApi = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    const caller = yield* authenticate(request)
    const organization = caller.organization
    if (!Organization.hasAccess(organization, yield* DateTime.now)) {
      return yield* new SubscriptionRequired({
        message: "This organization has no active subscription or trial",
        subscriptionStatus: organization.subscriptionStatus === "trialing"
          ? "trial_expired"
          : organization.subscriptionStatus
      })
    }
    return principalOf(caller)
  })

/** Owners and admins only (403 `forbidden` for members). */
export const requireOwnerOrAdmin = (caller: Sessions.SignedIn) =>
  Users.isOwnerOrAdmin(caller.user.role)
    ? Effect.void
    : Effect.fail(DomainError.of("forbidden", "Only an owner or an admin of the organization may do this"))

/** For a cookie caller on /api/v1: owners and admins only. API keys are organization credentials. */
export const requireOwnerOrAdminWhenSession = (principal: Principal) =>
  principal.session === undefined ? Effect.void : requireOwnerOrAdmin(principal.session)

// the cookie

const cookieAttributes = (secure: boolean) => `Path=/; HttpOnly; SameSite=Lax${secure ? "; Secure" : ""}`

/** Sets the session cookie; it lives as long as the session's absolute lifetime. */
export const withSessionCookie = (
  response: HttpServerResponse.HttpServerResponse,
  request: HttpServerRequest.HttpServerRequest,
  token: string
) =>
  Effect.gen(function*() {
    const secure = yield* isSecure(request)
    const { absoluteSeconds } = yield* sessionSettings
    return HttpServerResponse.setHeader(
      response,
      "set-cookie",
      `${cookieName}=${token}; Max-Age=${absoluteSeconds}; ${cookieAttributes(secure)}`
    )
  })

export const withoutSessionCookie = (
  response: HttpServerResponse.HttpServerResponse,
  request: HttpServerRequest.HttpServerRequest
) =>
  Effect.map(isSecure(request), (secure) =>
    HttpServerResponse.setHeader(
      response,
      "set-cookie",
      `${cookieName}=; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; ${cookieAttributes(secure)}`
    ))

// the /dashboard/api middleware

/** 401 `session_required` and 403 `csrf_failed` (both `DomainError`s in the envelope). */
export const SessionFailureResponse = Schema.Union(Envelope.errorResponse(401), Envelope.errorResponse(403))

export class SessionAuthentication extends HttpApiMiddleware.Tag<SessionAuthentication>()(
  "@herald/http/SessionAuthentication",
  {
    failure: SessionFailureResponse,
    provides: CurrentSession
  }
) {}

export const layer: Layer.Layer<SessionAuthentication, never, SessionRequirements> = Layer.effect(
  SessionAuthentication,
  Effect.gen(function*() {
    const context = yield* Effect.context<SessionRequirements>()
    return HttpServerRequest.HttpServerRequest.pipe(
      Effect.flatMap(authenticate),
      Effect.provide(context)
    )
  })
).pipe(Layer.provide(layerSettingsFromEnv))
