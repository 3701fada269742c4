/**
 * The platforms of the spec, and `twitter`, accepted by the post-list filter as an alias of `x`.
 */
import * as Schema from "effect/Schema"

export const platforms = [
  "x",
  "instagram",
  "facebook",
  "linkedin",
  "youtube",
  "tiktok",
  "threads",
  "pinterest",
  "bluesky",
  "telegram",
  "discord"
] as const

export const Platform = Schema.Literal(...platforms)
export type Platform = typeof Platform.Type

/** Platforms connected through an OAuth connect link. */
export const oauthPlatforms = [
  "x",
  "instagram",
  "facebook",
  "youtube",
  "pinterest",
  "threads",
  "linkedin",
  "tiktok"
] as const
export const OAuthPlatform = Schema.Literal(...oauthPlatforms)
export type OAuthPlatform = typeof OAuthPlatform.Type

/** Platforms connected by submitting credentials. */
export const credentialPlatforms = ["telegram", "discord", "bluesky"] as const
export const CredentialPlatform = Schema.Literal(...credentialPlatforms)
export type CredentialPlatform = typeof CredentialPlatform.Type

export const isPlatform = Schema.is(Platform)

/** Reads a platform name as the post-list filter does: `twitter` means `x`. */
export const parseFilterPlatform = (value: string): Platform | undefined => {
  const lowered = value.trim().toLowerCase()
  if (lowered === "twitter") return "x"
  return isPlatform(lowered) ? lowered : undefined
}
