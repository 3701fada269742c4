/**
 * A Bluesky account's session: a handle and an app password, kept as a session (access and refresh
 * JWTs) that is refreshed rather than re-created for every call, and the identity it proves.
 *
 * On `ExpiredToken` / `InvalidToken` (or a 401) the session is refreshed and the call retried once;
 * if the refresh fails, a new session is created with the app password. Whether the session changed
 * is remembered, so the caller can store the renewed credentials.
 *
 * Stored credentials: `identifier` (what the user typed), `handle`, `app_password`, `did`,
 * `access_jwt`, `refresh_jwt`, `service` (where sessions are created and refreshed) and `pds`
 * (where records are written, from the DID document).
 */
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type { ConnectedIdentity, Credentials, PublishError } from "@herald/core/platforms/Platforms"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import { field, publishError, stringField, trimSlash } from "./internal/PlatformHttp.js"
import { classifyNow, type Context, needsRenewal, unexpected, type Xrpc, type XrpcFailure } from "./BlueskyXrpc.js"

export interface Session {
  readonly did: string
  readonly handle: string
  readonly accessJwt: string
  readonly refreshJwt: string
  readonly service: string
  readonly pds: string
}

interface Login {
  readonly identifier: string
  readonly password: string
}

const appPasswordPattern = /^[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}$/

const pdsFromDidDoc = (didDoc: unknown): string | undefined => {
  const services = field(didDoc, "service")
  if (!Array.isArray(services)) return undefined
  for (const service of services) {
    const id = stringField(service, "id")
    const endpoint = stringField(service, "serviceEndpoint")
    if ((id === "#atproto_pds" || (id?.endsWith("#atproto_pds") ?? false)) && endpoint !== undefined) {
      if (/^https?:\/\/[^/\s]+/.test(endpoint)) return trimSlash(endpoint)
    }
  }
  return undefined
}

const sessionFrom = (body: unknown, service: string, fallbackPds: string): Session | undefined => {
  const did = stringField(body, "did")
  const handle = stringField(body, "handle")
  const accessJwt = stringField(body, "accessJwt")
  const refreshJwt = stringField(body, "refreshJwt")
  if (did === undefined || handle === undefined || accessJwt === undefined || refreshJwt === undefined) {
    return undefined
  }
  const pds = pdsFromDidDoc(field(body, "didDoc")) ?? fallbackPds
  return { did, handle, accessJwt, refreshJwt, service, pds }
}

const createSession = (xrpc: Xrpc, service: string, login: Login): Effect.Effect<Session, PublishError> =>
  xrpc.call(
    HttpClientRequest.post(`${service}/xrpc/com.atproto.server.createSession`).pipe(
      HttpClientRequest.bodyUnsafeJson({ identifier: login.identifier, password: login.password })
    )
  ).pipe(
    Effect.catchTag("XrpcFailure", (f) => classifyNow(f, "login", [login.password])),
    Effect.flatMap((body) => {
      const session = sessionFrom(body, service, service)
      return session === undefined ? Effect.fail(unexpected("createSession")) : Effect.succeed(session)
    }),
    Effect.tap((session) => session.pds === service ? Effect.void : xrpc.guardEndpoint(session.pds, "PDS endpoint"))
  )

const refreshSession = (xrpc: Xrpc, session: Session): Effect.Effect<Session, XrpcFailure | PublishError> =>
  xrpc.call(
    HttpClientRequest.post(`${session.service}/xrpc/com.atproto.server.refreshSession`).pipe(
      HttpClientRequest.bearerToken(session.refreshJwt)
    )
  ).pipe(
    Effect.flatMap((body) => {
      const next = sessionFrom(body, session.service, session.pds)
      return next === undefined ? Effect.fail(unexpected("refreshSession")) : Effect.succeed(next)
    }),
    Effect.tap((next) => next.pds === session.pds ? Effect.void : xrpc.guardEndpoint(next.pds, "PDS endpoint"))
  )

/** One publish or refresh run over a session. */
export interface SessionScope {
  /** The session calls are made with. */
  readonly current: Ref.Ref<Session>
  /** Whether the session differs from the stored one (created or renewed during the run). */
  readonly changed: Ref.Ref<boolean>
  /** Refreshes the session; when the refresh token is refused, creates a new one with the app password. */
  readonly renew: Effect.Effect<Session, PublishError>
  /** An authenticated call, renewed and retried once when the platform says the session has expired. */
  readonly authed: <A>(
    call: (session: Session) => Effect.Effect<A, XrpcFailure | PublishError>,
    context?: Context
  ) => Effect.Effect<A, PublishError>
  /** The stored credentials with the current session. */
  readonly credentials: Effect.Effect<Record<string, string>>
  /** Every secret seen during the run, scrubbed from error messages. */
  readonly secrets: () => Array<string>
}

/**
 * Opens a session over the stored credentials: the stored session when there is one, else a new
 * one with the app password. The service (and the PDS) are checked on every run, not only at connect.
 */
export const open = (
  xrpc: Xrpc,
  defaultService: string,
  stored: Readonly<Record<string, string>>
): Effect.Effect<SessionScope, PublishError> =>
  Effect.gen(function*() {
    const service = trimSlash(stored["service"] ?? defaultService)
    const login: Login = {
      identifier: stored["identifier"] ?? stored["handle"] ?? "",
      password: stored["app_password"] ?? ""
    }
    const known: Array<string | undefined> = [login.password, stored["access_jwt"], stored["refresh_jwt"]]
    const secrets = () => known.filter(Predicate.isString)
    const storedSession: Session | undefined = stored["did"] !== undefined &&
        stored["access_jwt"] !== undefined &&
        stored["refresh_jwt"] !== undefined
      ? {
        did: stored["did"],
        handle: stored["handle"] ?? stored["did"],
        accessJwt: stored["access_jwt"],
        refreshJwt: stored["refresh_jwt"],
        service,
        pds: trimSlash(stored["pds"] ?? service)
      }
      : undefined
    // Checked on every run, not only at connect: a host name can be pointed elsewhere later.
    yield* xrpc.guardEndpoint(service, "service")
    if (storedSession !== undefined && storedSession.pds !== service) {
      yield* xrpc.guardEndpoint(storedSession.pds, "PDS endpoint")
    }
    const canLogin = login.identifier !== "" && login.password !== ""
    if (storedSession === undefined && !canLogin) {
      return yield* publishError("auth", "Bluesky: the stored credentials hold neither a session nor an app password")
    }
    const initial = storedSession ?? (yield* createSession(xrpc, service, login))
    const current = yield* Ref.make(initial)
    const changed = yield* Ref.make(storedSession === undefined)

    const relogin = canLogin
      ? createSession(xrpc, service, login)
      : Effect.fail(publishError("auth", "Bluesky: the session expired and no app password is stored"))

    /** refreshSession; when the refresh token is refused, a new session with the app password. */
    const renew: Effect.Effect<Session, PublishError> = Effect.gen(function*() {
      const session = yield* Ref.get(current)
      const next = yield* refreshSession(xrpc, session).pipe(
        Effect.catchTag("XrpcFailure", (f) =>
          f.response.status === 400 || f.response.status === 401 || f.response.status === 403
            ? relogin
            : classifyNow(f, "default", secrets()))
      )
      known.push(next.accessJwt, next.refreshJwt)
      yield* Ref.set(current, next)
      yield* Ref.set(changed, true)
      return next
    })

    const authed = <A>(
      call: (session: Session) => Effect.Effect<A, XrpcFailure | PublishError>,
      context: Context = "default"
    ): Effect.Effect<A, PublishError> =>
      Effect.flatMap(Ref.get(current), (session) =>
        call(session).pipe(
          Effect.catchTag("XrpcFailure", (failure) =>
            needsRenewal(failure.response)
              ? Effect.flatMap(renew, (fresh) =>
                call(fresh).pipe(Effect.catchTag("XrpcFailure", (f) =>
                  classifyNow(f, context, secrets()))))
              : classifyNow(failure, context, secrets()))
        ))

    const credentials = Effect.gen(function*() {
      const session = yield* Ref.get(current)
      const out: Record<string, string> = {
        ...stored,
        did: session.did,
        handle: session.handle,
        access_jwt: session.accessJwt,
        refresh_jwt: session.refreshJwt,
        service: session.service,
        pds: session.pds
      }
      if (login.identifier !== "") {
        out["identifier"] = login.identifier
      }
      return out
    })

    return { current, changed, renew, authed, credentials, secrets }
  })

const getProfile = (xrpc: Xrpc, scope: SessionScope) =>
  scope.authed((session) =>
    xrpc.call(
      HttpClientRequest.get(`${session.pds}/xrpc/app.bsky.actor.getProfile`).pipe(
        HttpClientRequest.setUrlParam("actor", session.did),
        HttpClientRequest.bearerToken(session.accessJwt)
      )
    )
  )

/**
 * The account's identity. The session already proves the credentials; the profile only adds the
 * avatar, and the AppView has none for an account it has not indexed yet (a brand-new account, a
 * self-hosted PDS: 400 `InvalidRequest` "Profile not found"). So any failure of the profile lookup
 * but a refused session leaves the handle from the session and no avatar.
 */
const identityOf = (xrpc: Xrpc, scope: SessionScope) =>
  Effect.gen(function*() {
    const profile = yield* getProfile(xrpc, scope).pipe(
      Effect.catchAll((error) =>
        error.kind === "auth"
          ? Effect.fail(error)
          : Effect.as(
            Effect.logWarning(`Bluesky: no profile for the account yet (${error.message}); using the session's handle`),
            undefined
          )
      )
    )
    const session = yield* Ref.get(scope.current)
    return {
      platformAccountId: session.did,
      accountName: stringField(profile, "handle") ?? session.handle,
      avatarUrl: stringField(profile, "avatar") ?? "",
      credentials: yield* scope.credentials,
      tokenExpiresAt: Option.none()
    } satisfies ConnectedIdentity
  })

export interface ConnectOptions {
  /** Where sessions are created unless the user names a service. */
  readonly defaultService: string
  /** Accept a user-supplied `service` over plain http (tests and local PDSes only). */
  readonly allowInsecureService: boolean
}

/** Connects an account from its handle and app password (and, for a self-hosted PDS, its service). */
export const connectWithCredentials = (
  xrpc: Xrpc,
  options: ConnectOptions,
  input: Readonly<Record<string, string>>
): Effect.Effect<ConnectedIdentity, PublishError> =>
  Effect.gen(function*() {
    const identifier = (input["handle"] ?? "").trim().replace(/^@/, "")
    const password = (input["app_password"] ?? "").trim()
    if (identifier === "") return yield* publishError("auth", "Bluesky: handle is required")
    if (!appPasswordPattern.test(password)) {
      return yield* publishError(
        "auth",
        "Bluesky: app_password must be an app password (xxxx-xxxx-xxxx-xxxx), never the account password"
      )
    }
    const requested = input["service"]?.trim()
    let service = options.defaultService
    if (requested !== undefined && requested !== "") {
      const ok = options.allowInsecureService
        ? /^https?:\/\/[^/\s]+\/?$/.test(requested)
        : /^https:\/\/[^/\s]+\/?$/.test(requested)
      if (!ok) {
        return yield* publishError("auth", "Bluesky: service must be an https origin such as https://bsky.social")
      }
      service = trimSlash(requested)
    }
    const scope = yield* open(xrpc, options.defaultService, { identifier, app_password: password, service })
    return yield* identityOf(xrpc, scope)
  })

/** Renews the stored session (unless opening it already made a new one) and reads the identity again. */
export const refresh = (
  xrpc: Xrpc,
  defaultService: string,
  credentials: Credentials
): Effect.Effect<ConnectedIdentity, PublishError> =>
  Effect.gen(function*() {
    const scope = yield* open(xrpc, defaultService, Redacted.value(credentials))
    if (!(yield* Ref.get(scope.changed))) yield* scope.renew
    return yield* identityOf(xrpc, scope)
  })
