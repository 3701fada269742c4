/**
 * A `Platforms` decorator: on the named platforms, a publish refused as `auth` renews the account's
 * token once (`Connections.renewAfterAuthFailure`) and is sent again with the renewed credentials;
 * only a second refusal reaches the engine, which then marks the account for reconnection. So a publish
 * racing the refresh sweep (an access token that expired while the server was down, renewed a moment
 * later) does not disconnect a healthy account.
 *
 * A retry cannot post twice: an `auth` answer means the platform refused the main post, and follow-ups
 * (thread parts, first comments) never fail a publish. The renewed credentials are already stored when
 * the retry is sent, whatever its outcome.
 */
import type { SocialAccount } from "../domain/Account.js"
import type { AccountStore } from "../accounts/AccountStore.js"
import * as Connections from "../accounts/Connections.js"
import type { EventStore } from "../webhooks/EventStore.js"
import type { IdGenerator } from "../kernel/IdGenerator.js"
import type { Platform } from "../domain/Platform.js"
import { type PlatformClient, Platforms } from "../platforms/Platforms.js"
import type { Transactor } from "../kernel/Transactor.js"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"

type Requirements = AccountStore | Transactor | EventStore | IdGenerator | Connections.OAuthProviders

/**
 * The OAuth platforms whose grants carry a refresh token (or, on Instagram and Threads, a long-lived
 * token that renews itself): a publish refused as `auth` is worth one renewal there. Facebook Page
 * tokens never expire and have nothing to renew.
 */
export const refreshablePlatforms: ReadonlyArray<Platform> = [
  "x",
  "youtube",
  "linkedin",
  "pinterest",
  "tiktok",
  "threads",
  "instagram"
]

/** The registry below, with the publishes of `platforms` retried once after a token renewal. */
export const decorate = (
  platforms: ReadonlyArray<Platform>
): Effect.Effect<Platforms["Type"], never, Platforms | Requirements> =>
  Effect.gen(function*() {
    const inner = yield* Platforms
    const context = yield* Effect.context<Requirements>()
    const renew = (account: SocialAccount, used: Readonly<Record<string, string>>) =>
      Connections.renewAfterAuthFailure(account, used).pipe(Effect.provide(context))
    const wrap = (client: PlatformClient): PlatformClient => ({
      ...client,
      publish: (request) =>
        client.publish(request).pipe(
          Effect.catchAll((error) =>
            error.kind !== "auth"
              ? Effect.fail(error)
              : Effect.flatMap(renew(request.account, Redacted.value(request.credentials)), (renewed) =>
                Option.isNone(renewed)
                  ? Effect.fail(error)
                  : Effect.zipRight(
                    Effect.logInfo(
                      `${client.platform}: publish refused (auth); retrying once with renewed credentials`
                    ),
                    client.publish({ ...request, credentials: Redacted.make(renewed.value) })
                  ))
          )
        )
    })
    return Platforms.of({
      get: (platform) =>
        Option.map(inner.get(platform), (client) => platforms.includes(platform) ? wrap(client) : client)
    })
  })

export const layer = (platforms: ReadonlyArray<Platform>): Layer.Layer<Platforms, never, Platforms | Requirements> =>
  Layer.effect(Platforms, decorate(platforms))
