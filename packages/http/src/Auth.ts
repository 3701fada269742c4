/**
 * API-key authentication: `Authorization: Bearer pe_live_<32 hex>`, looked up by its SHA-256 only.
 * The middleware also refuses organizations without an active subscription or trial (402) and
 * counts the request against the key's rate limits (429). Handlers read the caller from `CurrentKey`.
 */
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as OpenApi from "@effect/platform/OpenApi"
import type { SocialAccount } from "@herald/core/domain/Account"
import { AccountStore } from "@herald/core/accounts/AccountStore"
import * as ApiKey from "@herald/core/access/ApiKey"
import { ApiKeyStore } from "@herald/core/access/ApiKeyStore"
import { Crypto } from "@herald/core/kernel/Crypto"
import { DomainError } from "@herald/core/kernel/Errors"
import type { AccountId } from "@herald/core/kernel/Ids"
import * as Organization from "@herald/core/access/Organization"
import { OrganizationStore } from "@herald/core/access/OrganizationStore"
import { RequestCounters } from "@herald/core/access/RequestCounters"
import type { PostStore } from "@herald/core/posts/PostStore"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Envelope from "./Envelope.js"
import * as KeyUsage from "./KeyUsage.js"
import * as Permissions from "./Permissions.js"
import * as RateLimit from "./RateLimit.js"
import * as SessionAuth from "./SessionAuth.js"

/** The authenticated caller: the key and its organization. */
export interface Principal {
  readonly key: ApiKey.ApiKey
  readonly organization: Organization.Organization
  /** Set when the caller is a signed-in browser (the session cookie), not an API key. */
  readonly session?: SessionAuth.Caller
}

export class CurrentKey extends Context.Tag("@herald/http/CurrentKey")<CurrentKey, Principal>() {}

/** 401 from the auth layer for a key that is unknown or malformed, revoked, expired, or (on the connect bridge) missing. */
export class AuthFailure extends Schema.TaggedError<AuthFailure>()("AuthFailure", {
  code: Schema.Literal("invalid_api_key", "api_key_revoked", "api_key_expired", "api_key_required"),
  message: Schema.String
}) {}

/** 402 from the auth layer: the organization has neither an active subscription nor a running trial. */
export class SubscriptionRequired extends Schema.TaggedError<SubscriptionRequired>()("SubscriptionRequired", {
  message: Schema.String,
  subscriptionStatus: Schema.String
}) {}

/** No Authorization header at all: answered with a plain-text `401 Unauthorized`, not the envelope. */
export class MissingCredentials extends Schema.TaggedError<MissingCredentials>()("MissingCredentials", {}) {}

const AuthFailureResponse = Schema.transform(Envelope.AuthErrorEnvelope, Schema.typeSchema(AuthFailure), {
  strict: true,
  decode: (e) =>
    new AuthFailure({
      code: e.error.code === "subscription_required" ? "invalid_api_key" : e.error.code,
      message: e.error.message
    }),
  encode: (error) => Envelope.authBody({ code: error.code, message: error.message, timestamp: "" })
}).annotations(HttpApiSchema.annotations({ status: 401, identifier: "AuthErrorEnvelope" }))

const SubscriptionRequiredResponse = Schema.transform(
  Envelope.AuthErrorEnvelope,
  Schema.typeSchema(SubscriptionRequired),
  {
    strict: true,
    decode: (e) =>
      new SubscriptionRequired({ message: e.error.message, subscriptionStatus: e.error.subscription_status ?? "" }),
    encode: (error) =>
      Envelope.authBody({
        code: "subscription_required",
        message: error.message,
        timestamp: "",
        subscriptionStatus: error.subscriptionStatus
      })
  }
).annotations(HttpApiSchema.annotations({ status: 402, identifier: "AuthErrorEnvelope" }))

const MissingCredentialsResponse = Schema.transform(
  Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/plain" })),
  Schema.typeSchema(MissingCredentials),
  { strict: true, decode: () => new MissingCredentials(), encode: () => "Unauthorized" }
).annotations(HttpApiSchema.annotations({ status: 401 }))

export const RateLimitedResponse = Envelope.errorResponse(429)

export const bearer = HttpApiSecurity.bearer.pipe(
  HttpApiSecurity.annotate(OpenApi.Description, "An API key: `pe_live_` followed by 32 hex characters")
)

export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("@herald/http/Authentication", {
  failure: Schema.Union(
    AuthFailureResponse,
    SubscriptionRequiredResponse,
    MissingCredentialsResponse,
    RateLimitedResponse,
    // 401 session_required and 403 csrf_failed of a cookie-authenticated request.
    SessionAuth.SessionFailureResponse
  ),
  provides: CurrentKey,
  security: { bearer }
}) {}

/**
 * The connect bridge's authentication (`/auth/social-connect/*`): the spec names 401
 * `api_key_required` for the social-connect flows, so a request presenting no key (no Authorization
 * header, an empty one, or one without a bearer token) is answered with that code in the auth-layer
 * shape instead of the plain-text 401. A key that is presented is checked as everywhere else.
 */
export class KeyRequiredAuthentication extends HttpApiMiddleware.Tag<KeyRequiredAuthentication>()(
  "@herald/http/KeyRequiredAuthentication",
  {
    failure: Schema.Union(AuthFailureResponse, SubscriptionRequiredResponse, RateLimitedResponse),
    provides: CurrentKey,
    security: { bearer }
  }
) {}

const bearerPattern = /^Bearer +(\S+) *$/i

const keyRequired = new AuthFailure({
  code: "api_key_required",
  message: "An API key is required: send Authorization: Bearer pe_live_…"
})

/** `authenticate`, with a missing key reported as 401 `api_key_required`. */
export const authenticateKeyRequired = (authorization: string | undefined) =>
  authorization === undefined || !/^Bearer +\S/i.test(authorization)
    ? Effect.fail(keyRequired)
    : authenticate(authorization).pipe(
      Effect.catchTag("MissingCredentials", () => Effect.fail(keyRequired))
    )

/** What a subscription status is reported as on 402: a trial past its end says so. */
const reportedStatus = (org: Organization.Organization): string =>
  org.subscriptionStatus === "trialing" ? "trial_expired" : org.subscriptionStatus

/**
 * Resolves the presented token to its key and organization, or fails with the auth layer's error.
 * The token itself goes no further than its hash.
 */
export const authenticate = (authorization: string | undefined) =>
  Effect.gen(function*() {
    if (authorization === undefined) return yield* new MissingCredentials()
    const token = bearerPattern.exec(authorization)?.[1]
    if (token === undefined || !ApiKey.isWellFormedKey(token)) {
      return yield* new AuthFailure({ code: "invalid_api_key", message: "Invalid API key" })
    }
    // The services in one context read (this runs on every authenticated request).
    const services = yield* Effect.context<Crypto | ApiKeyStore | OrganizationStore>()
    const crypto = Context.get(services, Crypto)
    const hash = yield* crypto.sha256Hex(token)
    const found = yield* Context.get(services, ApiKeyStore).findByHash(hash)
    // The lookup is by hash; the constant-time comparison guards a store whose lookup is not exact.
    if (Option.isNone(found) || !crypto.timingSafeEqual(found.value.hash, hash)) {
      return yield* new AuthFailure({ code: "invalid_api_key", message: "Invalid API key" })
    }
    const key = found.value
    const now = yield* DateTime.now
    switch (ApiKey.keyState(key, now)) {
      case "revoked":
        return yield* new AuthFailure({ code: "api_key_revoked", message: "This API key has been revoked" })
      case "expired":
        return yield* new AuthFailure({ code: "api_key_expired", message: "This API key has expired" })
    }
    const org = yield* Context.get(services, OrganizationStore).findById(key.organizationId)
    if (Option.isNone(org)) return yield* new AuthFailure({ code: "invalid_api_key", message: "Invalid API key" })
    if (!Organization.hasAccess(org.value, now)) {
      return yield* new SubscriptionRequired({
        message: "This organization has no active subscription or trial",
        subscriptionStatus: reportedStatus(org.value)
      })
    }
    yield* RateLimit.consumeAt(key.id, now)
    yield* KeyUsage.markUsed(key.id, now)
    return { key, organization: org.value } satisfies Principal
  }).pipe(Effect.catchTag("PersistenceError", Effect.die))

/**
 * The API-key middleware's check of one request. The decoded bearer value cannot tell a missing
 * header from an empty one: read the header. Without one, a session cookie authenticates (spec
 * rule 4); a key always wins over a cookie.
 */
export const authenticateRequest = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    if (request.headers["authorization"] === undefined && SessionAuth.hasSessionCookie(request)) {
      return yield* SessionAuth.authenticateApi(request)
    }
    return yield* authenticate(request.headers["authorization"])
  })

/**
 * The middleware of /api/v1: authenticates the request, then holds a browser session to its user's
 * role for the matched route (`Permissions`, the role matrix in one place).
 */
/** What the middleware reads: keys, organizations, rate limits, sessions, and posts (a member's own). */
type AuthenticationRequirements =
  | ApiKeyStore
  | OrganizationStore
  | Crypto
  | RequestCounters
  | RateLimit.RateLimits
  | SessionAuth.SessionRequirements
  | PostStore

export const layer: Layer.Layer<Authentication, never, AuthenticationRequirements> = Layer.effect(
  Authentication,
  Effect.gen(function*() {
    const context = yield* Effect.context<AuthenticationRequirements>()
    return Authentication.of({
      bearer: () =>
        HttpServerRequest.HttpServerRequest.pipe(
          Effect.flatMap(authenticateRequest),
          Effect.tap(Permissions.authorizeRoute),
          Effect.provide(context)
        )
    })
  })
).pipe(Layer.provide(SessionAuth.layerSettingsFromEnv))

export const layerKeyRequired: Layer.Layer<
  KeyRequiredAuthentication,
  never,
  ApiKeyStore | OrganizationStore | Crypto | RequestCounters | RateLimit.RateLimits
> = Layer.effect(
  KeyRequiredAuthentication,
  Effect.gen(function*() {
    const context = yield* Effect.context<
      ApiKeyStore | OrganizationStore | Crypto | RequestCounters | RateLimit.RateLimits
    >()
    return KeyRequiredAuthentication.of({
      bearer: () =>
        HttpServerRequest.HttpServerRequest.pipe(
          Effect.flatMap((request) => authenticateKeyRequired(request.headers["authorization"])),
          Effect.provide(context)
        )
    })
  })
)

/** Fails with 403 `insufficient_scope` unless `principal`'s key carries `scope`. */
export const checkScope = (principal: Principal, scope: ApiKey.Scope): Effect.Effect<Principal, DomainError> =>
  ApiKey.hasScope(principal.key, scope)
    ? Effect.succeed(principal)
    : DomainError.fail("insufficient_scope", `This API key lacks the '${scope}' scope`, {
      required_scope: scope
    })

/** Fails with 403 `insufficient_scope` unless the caller's key carries `scope`. */
export const requireScope = (scope: ApiKey.Scope): Effect.Effect<Principal, DomainError, CurrentKey> =>
  Effect.flatMap(CurrentKey, (principal) => checkScope(principal, scope))

/** The accounts a restricted key is limited to; None for a key that sees every account. */
export const visibleAccountIds: Effect.Effect<Option.Option<ReadonlyArray<AccountId>>, never, CurrentKey> = Effect.map(
  CurrentKey,
  (principal) => principal.key.accountIds
)

/**
 * The account, when it is in the caller's organization and the key may see it; otherwise 404
 * `not_found` (another organization's account and an account outside a restricted key look absent).
 */
export const visibleAccount = (
  id: AccountId
): Effect.Effect<SocialAccount, DomainError, CurrentKey | AccountStore> =>
  Effect.gen(function*() {
    const { key, organization } = yield* CurrentKey
    const account = yield* (yield* AccountStore).findById(organization.id, id).pipe(
      Effect.catchTag("PersistenceError", Effect.die)
    )
    if (Option.isNone(account) || !ApiKey.canUseAccount(key, id)) {
      return yield* DomainError.notFound("Account")
    }
    return account.value
  })
