/**
 * Bluesky over AT Protocol XRPC (platform reference §2): a handle and an app password, kept as a
 * session (access and refresh JWTs) that is refreshed rather than re-created for every post.
 *
 * Publishing reuses the stored access JWT. On `ExpiredToken` / `InvalidToken` (or a 401) the
 * session is refreshed and the call retried once; if the refresh fails, a new session is created
 * with the app password. A changed session is returned as `renewedCredentials`.
 *
 * Stored credentials: `identifier` (what the user typed), `handle`, `app_password`, `did`,
 * `access_jwt`, `refresh_jwt`, `service` (where sessions are created and refreshed) and `pds`
 * (where records are written, from the DID document).
 *
 * Every call goes through `GuardedAgent`: a `service` or PDS that did not come from the operator is
 * resolved once per connection and connected to only if every address is public (unless the operator
 * allows private networks), and no redirect is ever followed, so neither a DNS answer that changes
 * after a check nor a 3xx can lead the app password or the session tokens elsewhere.
 */
import * as HttpBody from "@effect/platform/HttpBody"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { Metrics } from "@herald/core/posts/Destination"
import type { UrlFetcher } from "@herald/core/media/MediaLibrary"
import type {
  ConnectedIdentity,
  Credentials,
  MediaRef,
  PlatformClient,
  PublishedAnswer,
  PublishedLookup,
  PublishError,
  PublishPart,
  PublishRequest,
  PublishResult
} from "@herald/core/platforms/Platforms"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as AddressGuard from "../net/AddressGuard.js"
import * as GuardedAgent from "../net/GuardedAgent.js"
import * as LinkPreview from "./LinkPreview.js"
import * as RichText from "./BlueskyRichText.js"
import * as MediaBytes from "./internal/MediaBytes.js"
import {
  field,
  isRecord,
  numberField,
  publishError,
  type RawResponse,
  scrub,
  secondsHeader,
  send,
  stringField,
  trimSlash
} from "./internal/PlatformHttp.js"

export interface Options {
  /** Where sessions are created; `https://bsky.social` unless the account names its own. */
  readonly service?: string
  /** The video service; `https://video.bsky.app`. */
  readonly videoService?: string
  /** The public AppView used for metrics; `https://public.api.bsky.app`. */
  readonly appView?: string
  /** Accept a user-supplied `service` over plain http (tests and local PDSes only). */
  readonly allowInsecureService?: boolean
  /**
   * Operator switch (`HERALD_BLUESKY_ALLOW_PRIVATE=true`): a user-supplied `service`, or the PDS a
   * DID document names, may be on a private or local address (a self-hosted PDS on a private
   * network). Off: they pass the same address guard as webhooks. The origins of `service`,
   * `videoService` and `appView` above are the operator's own and are not range-checked (exact
   * scheme, host and port: another port on the same host is checked like any user address).
   */
  readonly allowPrivate?: boolean
  /** How the guard resolves host names (tests); the system resolver by default. */
  readonly resolve?: AddressGuard.Resolver
  /** Extra trusted CA certificates (PEM), for a self-hosted PDS behind a private CA. */
  readonly ca?: string
  /** Pause between video job polls; 2 seconds. */
  readonly videoPollInterval?: Duration.DurationInput
  /** Polls before a video job counts as stuck (transient); 150. */
  readonly videoMaxPolls?: number
  /** Fetches link card pages and thumbnails (the media importer's, behind its address guard); no cards without. */
  readonly linkCards?: UrlFetcher["Type"]
}

export const defaultService = "https://bsky.social"
export const defaultVideoService = "https://video.bsky.app"
export const defaultAppView = "https://public.api.bsky.app"

export const maxGraphemes = 300
export const maxBytes = 3000
export const maxImages = 4
export const maxImageBytes = 1_000_000
export const maxVideoBytes = 100 * 1024 * 1024

/** A link card's thumbnail is a blob like any image: under the blob cap, a type the PDS takes. */
const thumbRules: LinkPreview.ThumbRules = {
  maxBytes: maxImageBytes,
  types: ["image/jpeg", "image/png", "image/webp", "image/gif"]
}

const appPasswordPattern = /^[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}$/

interface Session {
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

interface StrongRef {
  readonly uri: string
  readonly cid: string
}

/** A failed XRPC call, before classification. */
class XrpcFailure extends Data.TaggedError("XrpcFailure")<{
  readonly response: RawResponse
}> {}

type Context = "default" | "upload" | "login"

const errorName = (response: RawResponse) => stringField(response.body, "error")

const authErrors = new Set([
  "ExpiredToken",
  "InvalidToken",
  "AuthenticationRequired",
  "AuthFactorTokenRequired",
  "AccountTakedown",
  "AccountDeactivated",
  "AuthMissing",
  "AuthRequired"
])

/** Maps a failed XRPC call to the reference's error classes (§2 Errors). */
export const classify = (
  response: RawResponse,
  context: Context,
  nowMillis: number,
  secrets: ReadonlyArray<string>
): PublishError => {
  const name = errorName(response)
  const text = stringField(response.body, "message")
  const message = scrub(
    `Bluesky: ${name ?? `HTTP ${response.status}`}${text !== undefined ? `: ${text}` : ""}`,
    secrets
  )
  if (response.status === 429 || name === "RateLimitExceeded") {
    const reset = secondsHeader(response.headers, "ratelimit-reset")
    const retryAfter = secondsHeader(response.headers, "retry-after") ??
      (reset !== undefined ? Math.ceil(reset - nowMillis / 1000) : undefined)
    return publishError("rate_limit", message, retryAfter)
  }
  if (response.status >= 500) return publishError("transient", message)
  if (response.status >= 300 && response.status < 400) {
    return publishError("permanent", `${message} (a redirect; Bluesky calls never follow one)`)
  }
  if (response.status === 401 || response.status === 403 || (name !== undefined && authErrors.has(name))) {
    return publishError("auth", message)
  }
  if (response.status === 413) return publishError("media", message)
  if (context === "upload" && response.status === 400) return publishError("media", message)
  if (name === "InvalidRequest" && text !== undefined && /longer than|too long|graphemes/i.test(text)) {
    return publishError("too_long", message)
  }
  return publishError("permanent", message)
}

/** Whether a failed authenticated call deserves a session renewal and one more try. */
const needsRenewal = (response: RawResponse): boolean => {
  const name = errorName(response)
  return response.status === 401 || name === "ExpiredToken" || name === "InvalidToken"
}

const tidAlphabet = "234567abcdefghijklmnopqrstuvwxyz"

/**
 * The creation time (ms) a TID record key carries, or undefined for a key that is not a TID. Record
 * keys of posts are TIDs minted when the record was created, so they order a repo's posts by creation
 * even when a client backdated `createdAt`.
 */
export const tidMillis = (rkey: string): number | undefined => {
  if (!/^[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}$/.test(rkey)) return undefined
  let value = 0n
  for (const c of rkey) value = value * 32n + BigInt(tidAlphabet.indexOf(c))
  return Number((value >> 10n) / 1000n)
}

/** How far `createdAt` (the publishing host's clock) may sit outside the attempt's window. */
const lookupSkewMillis = 60_000
/** Pages of 100 posts read at most; an account that posted more inside the window cannot be told. */
const lookupMaxPages = 5

/** `at://did/app.bsky.feed.post/rkey` -> `https://bsky.app/profile/{handle}/post/{rkey}`. */
export const postUrl = (handleOrDid: string, uri: string): string =>
  `https://bsky.app/profile/${handleOrDid}/post/${uri.split("/").pop() ?? ""}`

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

export const allowPrivateEnv = "HERALD_BLUESKY_ALLOW_PRIVATE"

const originOf = (url: string): string => {
  try {
    return new URL(url).origin
  } catch {
    return "(invalid URL)"
  }
}

/** Checks a post's text against Bluesky's lexicon limits before anything is sent. */
export const checkText = (text: string): PublishError | undefined => {
  const graphemes = RichText.graphemeLength(text)
  if (graphemes > maxGraphemes) {
    return publishError("too_long", `Bluesky: post text is ${graphemes} graphemes; the limit is ${maxGraphemes}`)
  }
  const bytes = RichText.utf8Length(text)
  if (bytes > maxBytes) {
    return publishError("too_long", `Bluesky: post text is ${bytes} bytes; the limit is ${maxBytes}`)
  }
  return undefined
}

/** An image's `alt` is required by the lexicon (empty when none); a video's is optional. */
const altOf = (media: MediaRef, required: boolean): { readonly alt?: string } =>
  media.altText !== undefined && media.altText.length > 0
    ? { alt: media.altText }
    : required
    ? { alt: "" }
    : {}

/** `aspectRatio` wants two positive integers; left out when the pixels are not known. */
const aspectRatioOf = (media: MediaRef): { readonly aspectRatio?: { width: number; height: number } } =>
  media.width !== undefined && media.height !== undefined && media.width > 0 && media.height > 0
    ? { aspectRatio: { width: Math.round(media.width), height: Math.round(media.height) } }
    : {}

/** Checks a post's media against what a Bluesky post can embed. */
export const checkMedia = (media: ReadonlyArray<MediaRef>): PublishError | undefined => {
  if (media.some((m) => m.kind === "document")) {
    return publishError("media", "Bluesky: documents cannot be posted; only images or one video")
  }
  const videos = media.filter((m) => m.kind === "video")
  const images = media.filter((m) => m.kind === "image")
  if (videos.length > 1 || (videos.length === 1 && images.length > 0)) {
    return publishError("media", "Bluesky: a post takes either up to 4 images or one video, not both")
  }
  if (images.length > maxImages) {
    return publishError("media", `Bluesky: a post takes at most ${maxImages} images, got ${images.length}`)
  }
  const big = images.find((m) => m.size > maxImageBytes)
  if (big !== undefined) {
    return publishError(
      "media",
      `Bluesky: image ${big.filename} is ${big.size} bytes; the limit is ${maxImageBytes} bytes per image`
    )
  }
  const bigVideo = videos.find((m) => m.size > maxVideoBytes)
  if (bigVideo !== undefined) {
    return publishError("media", `Bluesky: video ${bigVideo.filename} is ${bigVideo.size} bytes; the limit is 100 MB`)
  }
  return undefined
}

const refusedEndpoint = (url: string, what: string, refused: AddressGuard.AddressRefused): PublishError =>
  publishError(
    "auth",
    `Bluesky: the ${what} ${originOf(url)} is not allowed: ${refused.message}` +
      ` (a self-hosted PDS on a private network needs ${allowPrivateEnv}=true on the server)`
  )

export const make = (options: Options = {}): Effect.Effect<PlatformClient> =>
  Effect.gen(function*() {
    const defaultServiceUrl = trimSlash(options.service ?? defaultService)
    const videoService = trimSlash(options.videoService ?? defaultVideoService)
    const appView = trimSlash(options.appView ?? defaultAppView)
    const pollInterval = options.videoPollInterval ?? Duration.seconds(2)
    const trustedOrigins = [defaultServiceUrl, videoService, appView]
    const trusted = new Set(trustedOrigins.flatMap((o) => GuardedAgent.originKey(o) ?? []))
    const guardOptions: AddressGuard.GuardOptions = {
      allowPrivate: options.allowPrivate === true,
      allowPlainHttp: options.allowInsecureService === true,
      ...(options.resolve === undefined ? {} : { resolve: options.resolve })
    }
    const client = yield* GuardedAgent.httpClient({
      ...guardOptions,
      trustedOrigins,
      ...(options.ca === undefined ? {} : { ca: options.ca })
    })

    /**
     * An early, explained refusal of a service or PDS endpoint that did not come from the operator,
     * before any credential is used. The connection itself is checked again by the guarded agent,
     * which is what keeps a changed DNS answer out.
     */
    const guardEndpoint = (url: string, what: string): Effect.Effect<void, PublishError> =>
      trusted.has(GuardedAgent.originKey(url) ?? "")
        ? Effect.void
        : AddressGuard.resolveAndCheck(url, guardOptions).pipe(
          Effect.asVoid,
          Effect.mapError((refused) => refusedEndpoint(url, what, refused))
        )
    const maxPolls = options.videoMaxPolls ?? 150

    /** A refusal by the guarded agent says which endpoint was refused, as the early check does. */
    const sendGuarded = (request: HttpClientRequest.HttpClientRequest) =>
      send(client, request, "Bluesky", (refused) => refusedEndpoint(request.url, "endpoint", refused))

    const xrpc = (request: HttpClientRequest.HttpClientRequest): Effect.Effect<unknown, XrpcFailure | PublishError> =>
      Effect.flatMap(
        sendGuarded(request),
        (response) =>
          response.status >= 200 && response.status < 300
            ? Effect.succeed(response.body)
            : Effect.fail(new XrpcFailure({ response }))
      )

    const classifyNow = (failure: XrpcFailure, context: Context, secrets: ReadonlyArray<string>) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.fail(classify(failure.response, context, now, secrets)))

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

    const unexpected = (what: string) => publishError("transient", `Bluesky: unexpected ${what} response`)

    const createSession = (service: string, login: Login): Effect.Effect<Session, PublishError> =>
      xrpc(
        HttpClientRequest.post(`${service}/xrpc/com.atproto.server.createSession`).pipe(
          HttpClientRequest.bodyUnsafeJson({ identifier: login.identifier, password: login.password })
        )
      ).pipe(
        Effect.catchTag("XrpcFailure", (f) => classifyNow(f, "login", [login.password])),
        Effect.flatMap((body) => {
          const session = sessionFrom(body, service, service)
          return session === undefined ? Effect.fail(unexpected("createSession")) : Effect.succeed(session)
        }),
        Effect.tap((session) => session.pds === service ? Effect.void : guardEndpoint(session.pds, "PDS endpoint"))
      )

    const refreshSession = (session: Session): Effect.Effect<Session, XrpcFailure | PublishError> =>
      xrpc(
        HttpClientRequest.post(`${session.service}/xrpc/com.atproto.server.refreshSession`).pipe(
          HttpClientRequest.bearerToken(session.refreshJwt)
        )
      ).pipe(
        Effect.flatMap((body) => {
          const next = sessionFrom(body, session.service, session.pds)
          return next === undefined ? Effect.fail(unexpected("refreshSession")) : Effect.succeed(next)
        }),
        Effect.tap((next) => next.pds === session.pds ? Effect.void : guardEndpoint(next.pds, "PDS endpoint"))
      )

    /**
     * One publish or refresh run over a session: holds the current session, renews it when the
     * platform says it has expired, and remembers whether it changed.
     */
    const openSession = (stored: Readonly<Record<string, string>>) =>
      Effect.gen(function*() {
        const service = trimSlash(stored["service"] ?? defaultServiceUrl)
        const login: Login = {
          identifier: stored["identifier"] ?? stored["handle"] ?? "",
          password: stored["app_password"] ?? ""
        }
        const known: Array<string | undefined> = [login.password, stored["access_jwt"], stored["refresh_jwt"]]
        const secrets = () => known.filter(isString)
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
        yield* guardEndpoint(service, "service")
        if (storedSession !== undefined && storedSession.pds !== service) {
          yield* guardEndpoint(storedSession.pds, "PDS endpoint")
        }
        const canLogin = login.identifier !== "" && login.password !== ""
        if (storedSession === undefined && !canLogin) {
          return yield* publishError("auth", "Bluesky: the stored credentials hold neither a session nor an app password")
        }
        const initial = storedSession ?? (yield* createSession(service, login))
        const current = yield* Ref.make(initial)
        const changed = yield* Ref.make(storedSession === undefined)

        const relogin = canLogin
          ? createSession(service, login)
          : Effect.fail(publishError("auth", "Bluesky: the session expired and no app password is stored"))

        /** refreshSession; when the refresh token is refused, a new session with the app password. */
        const renew: Effect.Effect<Session, PublishError> = Effect.gen(function*() {
          const session = yield* Ref.get(current)
          const next = yield* refreshSession(session).pipe(
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
                    call(fresh).pipe(Effect.catchTag("XrpcFailure", (f) => classifyNow(f, context, secrets()))))
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
          if (login.identifier !== "") out["identifier"] = login.identifier
          return out
        })

        return { current, changed, renew, authed, credentials, secrets }
      })

    type SessionScope = Effect.Effect.Success<ReturnType<typeof openSession>>

    const getProfile = (scope: SessionScope) =>
      scope.authed((session) =>
        xrpc(
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
    const identityOf = (scope: SessionScope) =>
      Effect.gen(function*() {
        const profile = yield* getProfile(scope).pipe(
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

    const connectWithCredentials = (
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
        let service = defaultServiceUrl
        if (requested !== undefined && requested !== "") {
          const ok = options.allowInsecureService === true
            ? /^https?:\/\/[^/\s]+\/?$/.test(requested)
            : /^https:\/\/[^/\s]+\/?$/.test(requested)
          if (!ok) return yield* publishError("auth", "Bluesky: service must be an https origin such as https://bsky.social")
          service = trimSlash(requested)
        }
        const scope = yield* openSession({ identifier, app_password: password, service })
        return yield* identityOf(scope)
      })

    const refresh = (credentials: Credentials): Effect.Effect<ConnectedIdentity, PublishError> =>
      Effect.gen(function*() {
        const scope = yield* openSession(Redacted.value(credentials))
        if (!(yield* Ref.get(scope.changed))) yield* scope.renew
        return yield* identityOf(scope)
      })

    const resolveHandle = (pds: string) => (handle: string) =>
      xrpc(
        HttpClientRequest.get(`${pds}/xrpc/com.atproto.identity.resolveHandle`).pipe(
          HttpClientRequest.setUrlParam("handle", handle)
        )
      ).pipe(
        Effect.map((body) => Option.fromNullable(stringField(body, "did"))),
        // An unresolvable mention stays plain text; so does one we could not resolve just now.
        Effect.orElseSucceed(() => Option.none<string>())
      )

    const uploadBlob = (scope: SessionScope, upload: HttpBody.HttpBody) =>
      Effect.gen(function*() {
        const body = yield* scope.authed((session) =>
          xrpc(
            HttpClientRequest.post(`${session.pds}/xrpc/com.atproto.repo.uploadBlob`).pipe(
              HttpClientRequest.bearerToken(session.accessJwt),
              HttpClientRequest.setBody(upload)
            )
          ), "upload")
        const blob = field(body, "blob")
        if (!isRecord(blob)) return yield* unexpected("uploadBlob")
        return blob
      })

    /** Streamed from the store (re-read if the session is renewed and the upload sent again). */
    const uploadImage = (scope: SessionScope, media: MediaRef) => uploadBlob(scope, MediaBytes.body(media))

    /** The link card of a post without media: its first link's page, when link cards are on. */
    const cardFor = (scope: SessionScope, text: string) =>
      Effect.gen(function*() {
        const fetcher = options.linkCards
        if (fetcher === undefined) return undefined
        const card = yield* LinkPreview.ofText(fetcher, text, { label: "Bluesky", thumb: thumbRules })
        if (Option.isNone(card)) return undefined
        const { description, thumb, title, uri } = card.value
        // A thumbnail the PDS will not take leaves the card without one rather than failing the post.
        const blob = Option.isNone(thumb)
          ? undefined
          : yield* uploadBlob(scope, HttpBody.uint8Array(thumb.value.bytes, thumb.value.mimeType)).pipe(
            Effect.orElseSucceed(() => undefined)
          )
        return {
          $type: "app.bsky.embed.external",
          external: { uri, title, description, ...(blob === undefined ? {} : { thumb: blob }) }
        }
      })

    const uploadVideo = (scope: SessionScope, media: MediaRef) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const auth = yield* scope.authed((session) =>
          xrpc(
            HttpClientRequest.get(`${session.pds}/xrpc/com.atproto.server.getServiceAuth`).pipe(
              HttpClientRequest.setUrlParams({
                aud: `did:web:${new URL(session.pds).hostname}`,
                lxm: "com.atproto.repo.uploadBlob",
                exp: String(Math.floor(now / 1000) + 30 * 60)
              }),
              HttpClientRequest.bearerToken(session.accessJwt)
            )
          )
        )
        const token = stringField(auth, "token")
        if (token === undefined) return yield* unexpected("getServiceAuth")
        const session = yield* Ref.get(scope.current)
        const secrets = [...scope.secrets(), token]
        const uploaded = yield* sendGuarded(
          HttpClientRequest.post(`${videoService}/xrpc/app.bsky.video.uploadVideo`).pipe(
            HttpClientRequest.setUrlParams({ did: session.did, name: media.filename }),
            HttpClientRequest.bearerToken(token),
            HttpClientRequest.setBody(MediaBytes.body(media))
          )
        )
        // A video uploaded before answers 409 already_exists with its job id.
        const alreadyExists = uploaded.status === 409 && stringField(uploaded.body, "jobId") !== undefined
        if ((uploaded.status < 200 || uploaded.status >= 300) && !alreadyExists) {
          return yield* Effect.fail(classify(uploaded, "upload", now, secrets))
        }
        let job: unknown = field(uploaded.body, "jobStatus") ?? uploaded.body
        for (let poll = 0;; poll++) {
          const state = stringField(job, "state")
          const blob = field(job, "blob")
          if (state === "JOB_STATE_COMPLETED" && isRecord(blob)) return blob
          if (state === "JOB_STATE_FAILED") {
            const reason = stringField(job, "error") ?? stringField(job, "message") ?? "processing failed"
            return yield* publishError("media", scrub(`Bluesky: video ${media.filename} was rejected: ${reason}`, secrets))
          }
          if (poll >= maxPolls) {
            return yield* publishError("transient", `Bluesky: video ${media.filename} is still processing`)
          }
          const jobId = stringField(job, "jobId")
          if (jobId === undefined) return yield* unexpected("video job")
          yield* Effect.sleep(pollInterval)
          const status = yield* xrpc(
            HttpClientRequest.get(`${videoService}/xrpc/app.bsky.video.getJobStatus`).pipe(
              HttpClientRequest.setUrlParam("jobId", jobId)
            )
          ).pipe(Effect.catchTag("XrpcFailure", (f) => Effect.fail(classify(f.response, "upload", now, secrets))))
          job = field(status, "jobStatus") ?? status
          if (stringField(job, "jobId") === undefined && isRecord(job)) job = { ...job, jobId }
        }
      })

    const embedFor = (scope: SessionScope, media: ReadonlyArray<MediaRef>, text: string) =>
      Effect.gen(function*() {
        if (media.length === 0) return yield* cardFor(scope, text)
        const video = media.find((m) => m.kind === "video")
        if (video !== undefined) {
          const blob = yield* uploadVideo(scope, video)
          return { $type: "app.bsky.embed.video", video: blob, ...altOf(video, false), ...aspectRatioOf(video) }
        }
        const images: Array<Record<string, unknown>> = []
        for (const image of media) {
          images.push({ ...altOf(image, true), image: yield* uploadImage(scope, image), ...aspectRatioOf(image) })
        }
        return { $type: "app.bsky.embed.images", images }
      })

    const createPost = (
      scope: SessionScope,
      part: PublishPart,
      reply: { readonly root: StrongRef; readonly parent: StrongRef } | undefined,
      langs: ReadonlyArray<string> | undefined
    ): Effect.Effect<StrongRef, PublishError> =>
      Effect.gen(function*() {
        const pds = (yield* Ref.get(scope.current)).pds
        const facets = yield* RichText.resolve(RichText.detect(part.content), resolveHandle(pds))
        const embed = yield* embedFor(scope, part.media, part.content)
        const createdAt = new Date(yield* Clock.currentTimeMillis).toISOString()
        const record: Record<string, unknown> = { $type: "app.bsky.feed.post", text: part.content, createdAt }
        if (facets.length > 0) record["facets"] = facets
        if (embed !== undefined) record["embed"] = embed
        if (reply !== undefined) record["reply"] = reply
        if (langs !== undefined) record["langs"] = langs
        const body = yield* scope.authed((session) =>
          xrpc(
            HttpClientRequest.post(`${session.pds}/xrpc/com.atproto.repo.createRecord`).pipe(
              HttpClientRequest.bearerToken(session.accessJwt),
              HttpClientRequest.bodyUnsafeJson({ repo: session.did, collection: "app.bsky.feed.post", record })
            )
          )
        )
        const uri = stringField(body, "uri")
        const cid = stringField(body, "cid")
        if (uri === undefined || cid === undefined) return yield* unexpected("createRecord")
        return { uri, cid }
      })

    const publish = (request: PublishRequest): Effect.Effect<PublishResult, PublishError> =>
      Effect.gen(function*() {
        const stored = Redacted.value(request.credentials)
        const firstComment = request.settings["firstComment"]
        const comment = typeof firstComment === "string" && firstComment.trim() !== ""
          ? { content: firstComment, media: [] }
          : undefined
        const parts = [request.main, ...request.thread, ...(comment ? [comment] : [])]
        // Every part is checked before the first is posted: a late refusal would strand a half thread.
        for (const part of parts) {
          const problem = checkText(part.content) ?? checkMedia(part.media)
          if (problem !== undefined) return yield* problem
        }
        const langsSetting = request.settings["langs"]
        const langs = Array.isArray(langsSetting) && langsSetting.every(isString) && langsSetting.length > 0
          ? langsSetting.slice(0, 3)
          : undefined

        const scope = yield* openSession(stored)
        const main = yield* createPost(scope, request.main, undefined, langs)

        const followUp = (what: string, effect: Effect.Effect<StrongRef, PublishError>) =>
          Effect.either(effect).pipe(
            Effect.tap((result) =>
              result._tag === "Left"
                // The main post is out: failing now would make a retry post it twice.
                ? Effect.logWarning(
                  `Bluesky: ${what} not published after the main post: ${result.left.kind}: ${result.left.message}`
                )
                : Effect.void
            )
          )
        // Run by the engine once the main post is recorded, outside the publish deadline. A session
        // renewed while they run is not saved: the next publish renews it again.
        const followUps = Effect.gen(function*() {
          let parent = main
          for (const part of request.thread) {
            const sent = yield* followUp("thread part", createPost(scope, part, { root: main, parent }, langs))
            if (sent._tag === "Left") break
            parent = sent.right
          }
          if (comment !== undefined) {
            yield* followUp("first comment", createPost(scope, comment, { root: main, parent: main }, langs))
          }
        })

        const session = yield* Ref.get(scope.current)
        const result: PublishResult = {
          platformPostId: main.uri,
          platformPostUrl: postUrl(session.handle, main.uri),
          ...(request.thread.length > 0 || comment !== undefined ? { followUps } : {})
        }
        return (yield* Ref.get(scope.changed)) ? { ...result, renewedCredentials: yield* scope.credentials } : result
      })

    /**
     * Whether an attempt reached the account's repo: its posts newest first (`listRecords` at the PDS,
     * which answers for its own repo at once), looking for a top-level post with exactly the text sent,
     * created inside the attempt's window. Absent only once the listing went past the window.
     */
    const findPublished = (lookup: PublishedLookup): Effect.Effect<PublishedAnswer, PublishError> =>
      Effect.gen(function*() {
        const scope = yield* openSession(Redacted.value(lookup.credentials))
        const since = lookup.since.epochMillis - lookupSkewMillis
        const until = lookup.until.epochMillis + lookupSkewMillis
        let cursor: string | undefined
        for (let page = 0; page < lookupMaxPages; page++) {
          const body = yield* scope.authed((session) =>
            xrpc(
              HttpClientRequest.get(`${session.pds}/xrpc/com.atproto.repo.listRecords`).pipe(
                HttpClientRequest.bearerToken(session.accessJwt),
                HttpClientRequest.setUrlParams({
                  repo: session.did,
                  collection: "app.bsky.feed.post",
                  limit: "100",
                  ...(cursor === undefined ? {} : { cursor })
                })
              )
            )
          )
          const records = field(body, "records")
          if (!Array.isArray(records)) return yield* unexpected("listRecords")
          let pastWindow = false
          for (const item of records) {
            const uri = stringField(item, "uri")
            const value = field(item, "value")
            const createdAt = Date.parse(stringField(value, "createdAt") ?? "")
            if (uri === undefined) continue
            const created = tidMillis(uri.split("/").pop() ?? "") ?? createdAt
            if (Number.isFinite(created) && created < since) {
              pastWindow = true
              continue
            }
            const inWindow = Number.isFinite(createdAt) && createdAt >= since && createdAt <= until
            if (inWindow && field(value, "reply") === undefined && stringField(value, "text") === lookup.content) {
              const session = yield* Ref.get(scope.current)
              return { _tag: "Found", platformPostId: uri, platformPostUrl: postUrl(session.handle, uri) } as const
            }
          }
          cursor = stringField(body, "cursor")
          if (pastWindow || cursor === undefined || records.length === 0) return { _tag: "Absent" } as const
        }
        return {
          _tag: "Unknown",
          reason: `Bluesky: more than ${lookupMaxPages * 100} posts since the attempt began`
        } as const
      })

    /** Counts of up to 25 posts from one `getPosts` on the public AppView (no auth). */
    const metricsBatch = (
      _credentials: Credentials,
      platformPostIds: ReadonlyArray<string>
    ): Effect.Effect<ReadonlyMap<string, Metrics>, PublishError> =>
      Effect.gen(function*() {
        let request = HttpClientRequest.get(`${appView}/xrpc/app.bsky.feed.getPosts`)
        for (const uri of platformPostIds) request = HttpClientRequest.appendUrlParam(request, "uris", uri)
        const body = yield* xrpc(request).pipe(Effect.catchTag("XrpcFailure", (f) => classifyNow(f, "default", [])))
        const posts = field(body, "posts")
        const found = new Map<string, Metrics>()
        for (const post of Array.isArray(posts) ? posts : []) {
          const uri = stringField(post, "uri")
          if (uri === undefined || !platformPostIds.includes(uri)) continue
          const count = (key: string) => Math.max(0, Math.floor(numberField(post, key) ?? 0))
          found.set(
            uri,
            new Metrics({
              views: 0,
              likes: count("likeCount"),
              comments: count("replyCount"),
              shares: count("repostCount") + count("quoteCount"),
              impressions: 0,
              saves: count("bookmarkCount"),
              clicks: 0
            })
          )
        }
        return found
      })

    const metrics = (credentials: Credentials, platformPostId: string): Effect.Effect<Metrics, PublishError> =>
      Effect.flatMap(metricsBatch(credentials, [platformPostId]), (found) => {
        const metrics = found.get(platformPostId)
        return metrics !== undefined
          ? Effect.succeed(metrics)
          : Effect.fail(publishError("permanent", "Bluesky: the post no longer exists"))
      })

    return {
      platform: "bluesky",
      publish,
      connectWithCredentials,
      refresh,
      metrics,
      metricsBatch,
      metricsBatchSize: 25,
      findPublished,
      timeout: "10 minutes"
    } satisfies PlatformClient
  })

const isString = (u: unknown): u is string => typeof u === "string"
