/**
 * The `Platforms` registry: which client publishes to which platform. In sandbox mode every platform
 * gets the sandbox client; otherwise every platform's real client. A platform left out of a custom
 * registry (`make`) fails its destinations with a message saying so.
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import type { Platform } from "@herald/core/domain/Platform"
import { type PlatformClient, Platforms } from "@herald/core/platforms/Platforms"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ApiVersions from "./ApiVersions.js"
import * as Bluesky from "./Bluesky.js"
import * as Discord from "./Discord.js"
import * as Facebook from "./Facebook.js"
import * as Instagram from "./Instagram.js"
import * as LinkedIn from "./LinkedIn.js"
import * as Pinterest from "./Pinterest.js"
import * as Sandbox from "./Sandbox.js"
import * as Telegram from "./Telegram.js"
import * as Threads from "./Threads.js"
import * as TikTok from "./TikTok.js"
import * as X from "./X.js"
import * as YouTube from "./YouTube.js"

/** A registry over the clients; a later client for the same platform replaces an earlier one. */
export const make = (clients: ReadonlyArray<PlatformClient>): Platforms["Type"] => {
  const byPlatform = new Map<Platform, PlatformClient>()
  for (const client of clients) byPlatform.set(client.platform, client)
  return Platforms.of({ get: (platform) => Option.fromNullable(byPlatform.get(platform)) })
}

export const layer = (clients: ReadonlyArray<PlatformClient>): Layer.Layer<Platforms> =>
  Layer.succeed(Platforms, make(clients))

/** Every platform through the sandbox; its ledger and journal files stay open while the layer lives. */
export const layerSandbox = (options: Sandbox.SandboxOptions = {}): Layer.Layer<Platforms> =>
  Layer.scoped(Platforms, Effect.map(Sandbox.makeAllScoped(options), make))

export interface LiveOptions {
  readonly telegram?: Telegram.Options
  readonly discord?: Discord.Options
  readonly bluesky?: Bluesky.Options
  readonly x?: X.Options
  readonly linkedin?: LinkedIn.Options
  readonly threads?: Threads.Options
  readonly instagram?: Instagram.Options
  readonly facebook?: Facebook.Options
  readonly youtube?: YouTube.Options
  readonly tiktok?: TikTok.Options
  readonly pinterest?: Pinterest.Options
  /** Configuration problems found while reading the versions (logged at start). */
  readonly versionNotices?: ReadonlyArray<string>
}

/**
 * Logged when the live clients are built (server and worker start): malformed version settings, and
 * configured API versions within 30 days of their published sunset (`ApiVersions`).
 */
export const versionWarnings = (options: LiveOptions): Effect.Effect<ReadonlyArray<string>> =>
  Effect.map(DateTime.now, (now) => [
    ...(options.versionNotices ?? []),
    ...ApiVersions.sunsetWarnings({
      linkedin: options.linkedin?.version ?? ApiVersions.defaultLinkedInVersion,
      graph: options.facebook?.graphVersion ?? options.instagram?.graphVersion ?? ApiVersions.defaultGraphVersion
    }, now)
  ])

/**
 * A real client for every platform of the spec (Telegram, Discord, Bluesky, X, LinkedIn, Threads,
 * Instagram, Facebook, YouTube, TikTok, Pinterest), after warning of API versions near their sunset.
 */
export const layerLive = (options: LiveOptions = {}): Layer.Layer<Platforms, never, HttpClient.HttpClient> =>
  Layer.effect(
    Platforms,
    Effect.gen(function*() {
      for (const warning of yield* versionWarnings(options)) yield* Effect.logWarning(warning)
      const clients = yield* Effect.all([
        Telegram.make(options.telegram),
        Discord.make(options.discord),
        Bluesky.make(options.bluesky),
        X.make(options.x),
        LinkedIn.make(options.linkedin),
        Threads.make(options.threads),
        Instagram.make(options.instagram),
        Facebook.make(options.facebook),
        YouTube.make(options.youtube),
        TikTok.make(options.tiktok),
        Pinterest.make(options.pinterest)
      ])
      return make(clients)
    })
  )
