/**
 * The media library's `UrlFetcher` over node:http and node:https, behind the SSRF guard.
 *
 * Every hop goes through `GuardedAgent`: its host is resolved once, every address checked, and the
 * connection made to the checked addresses only (so DNS rebinding cannot slip through); redirects are
 * followed by hand, at most `maxRedirects`, each target a new guarded request, so a redirect to a
 * private, loopback, link-local or metadata address is refused like the URL itself. The whole exchange (every hop, and the body until its last byte) is
 * bounded by one deadline; the size cap is the caller's (`BlobStore.put` stops pulling at it).
 */
import * as NodeStream from "@effect/platform-node/NodeStream"
import { type FetchedUrl, UrlFetcher, UrlFetchError } from "@herald/core/media/MediaLibrary"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Http from "node:http"
import * as Https from "node:https"
import * as AddressGuard from "../net/AddressGuard.js"
import * as GuardedAgent from "../net/GuardedAgent.js"

export interface ImporterOptions {
  /** Private and local targets allowed (`HERALD_MEDIA_ALLOW_PRIVATE=true`); metadata addresses never. */
  readonly allowPrivate: boolean
  /** Plain `http:` to public addresses; allowed by default (no secret is sent). */
  readonly allowPlainHttp?: boolean
  /** The whole import, body included; 60 seconds by default. */
  readonly timeout?: Duration.DurationInput
  /** 5 by default; 0 follows none. */
  readonly maxRedirects?: number
  readonly resolve?: AddressGuard.Resolver
  /** Extra trusted CA certificates (PEM). */
  readonly ca?: string
}

export const defaultTimeout = Duration.seconds(60)
export const defaultMaxRedirects = 5

const fail = (reason: UrlFetchError["reason"], message: string) => new UrlFetchError({ reason, message })

const describe = (error: unknown): string => {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code
    return code !== undefined && !error.message.includes(code) ? `${code}: ${error.message}` : error.message
  }
  return "the connection failed"
}

/** The filename of a `Content-Disposition` header, if it names one. */
export const dispositionFilename = (header: string | undefined): string | undefined => {
  if (header === undefined) return undefined
  const extended = /filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]+)/.exec(header)?.[1]
  if (extended !== undefined) {
    try {
      return decodeURIComponent(extended.trim())
    } catch {
      return undefined
    }
  }
  const quoted = /filename\s*=\s*"([^"]*)"/.exec(header)?.[1]
  if (quoted !== undefined) return quoted
  return /filename\s*=\s*([^;]+)/.exec(header)?.[1]?.trim()
}

const lastSegment = (url: URL): string | undefined => {
  const segment = url.pathname.split("/").filter((s) => s !== "").pop()
  if (segment === undefined) return undefined
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

/** One GET through the guarded agents; the response is released (connection destroyed) with the scope. */
const get = (
  target: { readonly url: URL; readonly hostname: string; readonly port: number },
  agents: GuardedAgent.GuardedAgents
): Effect.Effect<Http.IncomingMessage, UrlFetchError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<{ readonly req: Http.ClientRequest; readonly res: Http.IncomingMessage }, UrlFetchError>((resume) => {
      const secure = target.url.protocol === "https:"
      const base: Https.RequestOptions = {
        method: "GET",
        hostname: target.hostname,
        port: target.port,
        path: `${target.url.pathname}${target.url.search}`,
        headers: { Host: target.url.host, "User-Agent": "Herald media import", Accept: "*/*" },
        agent: secure ? agents.https : agents.http
      }
      let req: Http.ClientRequest
      try {
        req = secure ? Https.request(base) : Http.request(base)
      } catch (error) {
        resume(Effect.fail(fail("network", describe(error))))
        return
      }
      req.on("error", (error) => {
        const refused = GuardedAgent.refusalIn(error)
        resume(Effect.fail(
          refused === undefined
            ? fail("network", describe(error))
            : fail(refused.reason === "unresolvable" ? "network" : "refused", refused.message)
        ))
      })
      req.on("response", (res) => resume(Effect.succeed({ req, res })))
      req.end()
      return Effect.sync(() => req.destroy())
    }),
    ({ req, res }) =>
      Effect.sync(() => {
        res.destroy()
        req.destroy()
      })
  ).pipe(Effect.map(({ res }) => res))

export const make = (options: ImporterOptions): UrlFetcher["Type"] => {
  const guard: AddressGuard.GuardOptions = {
    allowPrivate: options.allowPrivate,
    allowPlainHttp: options.allowPlainHttp ?? true,
    ...(options.resolve === undefined ? {} : { resolve: options.resolve })
  }
  const agents = GuardedAgent.make({ ...guard, ...(options.ca === undefined ? {} : { ca: options.ca }) })
  const timeout = Duration.decode(options.timeout ?? defaultTimeout)
  const maxRedirects = options.maxRedirects ?? defaultMaxRedirects

  const fetch = (raw: string): Effect.Effect<FetchedUrl, UrlFetchError, Scope.Scope> =>
    Effect.gen(function*() {
      const started = yield* Clock.currentTimeMillis
      const timedOut = () => fail("timeout", `no complete answer within ${Duration.format(timeout)}`)

      const hops = Effect.gen(function*() {
        let current = raw
        for (let hop = 0;; hop++) {
          const target = yield* AddressGuard.parseUrl(current, guard).pipe(
            Effect.mapError((refused) => fail("refused", refused.message))
          )
          const res = yield* get(target, agents)
          const status = res.statusCode ?? 0
          const location = res.headers.location
          if (status >= 300 && status < 400 && location !== undefined) {
            if (hop >= maxRedirects) {
              return yield* Effect.fail(fail("http_status", `more than ${maxRedirects} redirects`))
            }
            let next: URL
            try {
              next = new URL(location, target.url)
            } catch {
              return yield* Effect.fail(fail("http_status", "a redirect with an unusable Location"))
            }
            res.destroy()
            current = next.toString()
            continue
          }
          if (status < 200 || status >= 300) {
            return yield* Effect.fail(fail("http_status", `${target.hostname} answered HTTP ${status}`))
          }
          return { res, url: target.url }
        }
      })
      const { res, url } = yield* hops.pipe(Effect.timeoutFail({ duration: timeout, onTimeout: timedOut }))

      const lengthHeader = res.headers["content-length"]
      const length = lengthHeader !== undefined && /^\d+$/.test(lengthHeader) ? Number(lengthHeader) : undefined
      const filename = dispositionFilename(res.headers["content-disposition"]) ?? lastSegment(url)
      const elapsed = (yield* Clock.currentTimeMillis) - started
      const deadline = Effect.sleep(Duration.millis(Math.max(0, Duration.toMillis(timeout) - elapsed))).pipe(
        Effect.zipRight(Effect.fail(timedOut()))
      )
      const body = NodeStream.fromReadable<UrlFetchError, Uint8Array>(
        () => res,
        (error) => fail("network", describe(error))
      ).pipe(Stream.interruptWhen(deadline))
      const fetched: FetchedUrl = {
        contentType: Option.fromNullable(res.headers["content-type"]),
        contentLength: Option.fromNullable(length),
        filename: Option.fromNullable(filename),
        body
      }
      return fetched
    })

  return UrlFetcher.of({ fetch })
}

export const layer = (options: ImporterOptions): Layer.Layer<UrlFetcher> => Layer.succeed(UrlFetcher, make(options))

export const allowPrivateEnv = "HERALD_MEDIA_ALLOW_PRIVATE"

/** `HERALD_MEDIA_ALLOW_PRIVATE=true` (case-insensitive) allows private targets; anything else refuses them. */
export const fromEnv = (env: Readonly<Record<string, string | undefined>> = process.env): ImporterOptions => ({
  allowPrivate: env[allowPrivateEnv]?.trim().toLowerCase() === "true"
})
