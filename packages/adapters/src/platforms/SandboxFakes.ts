/**
 * What the sandbox makes up: post ids and URLs shaped like each platform's own, and plausible,
 * stable metrics that grow with a post's age.
 */
import { Metrics } from "@herald/core/domain/Destination"
import { type Platform } from "@herald/core/domain/Platform"
import * as Duration from "effect/Duration"
import * as crypto from "node:crypto"

const digits = (n: number): string => {
  let out = String(1 + crypto.randomInt(9))
  while (out.length < n) out += String(crypto.randomInt(10))
  return out
}

const alnum = (n: number, alphabet = "abcdefghijklmnopqrstuvwxyz234567"): string => {
  let out = ""
  for (let i = 0; i < n; i++) out += alphabet[crypto.randomInt(alphabet.length)]
  return out
}

export const slug = (name: string): string =>
  name.toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_|_$/g, "") || "sandbox"

/** A post id and URL shaped like the platform's own. */
export const fakePost = (platform: Platform, handle: string): { readonly id: string; readonly url: string } => {
  const h = slug(handle)
  switch (platform) {
    case "x": {
      const id = digits(19)
      return { id, url: `https://x.com/${h}/status/${id}` }
    }
    case "instagram": {
      const code = alnum(11, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
      return { id: digits(17), url: `https://www.instagram.com/p/${code}/` }
    }
    case "facebook": {
      const page = digits(15)
      const post = digits(16)
      return { id: `${page}_${post}`, url: `https://www.facebook.com/${page}/posts/${post}` }
    }
    case "linkedin": {
      const id = `urn:li:share:${digits(19)}`
      return { id, url: `https://www.linkedin.com/feed/update/${id}/` }
    }
    case "youtube": {
      const id = alnum(11, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
      return { id, url: `https://www.youtube.com/watch?v=${id}` }
    }
    case "tiktok": {
      const id = digits(19)
      return { id, url: `https://www.tiktok.com/@${h}/video/${id}` }
    }
    case "threads": {
      const code = alnum(11, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
      return { id: digits(17), url: `https://www.threads.net/@${h}/post/${code}` }
    }
    case "pinterest": {
      const id = digits(18)
      return { id, url: `https://www.pinterest.com/pin/${id}/` }
    }
    case "bluesky": {
      const rkey = alnum(13)
      return {
        id: `at://did:plc:${alnum(24)}/app.bsky.feed.post/${rkey}`,
        url: `https://bsky.app/profile/${h}.bsky.social/post/${rkey}`
      }
    }
    case "telegram": {
      const id = String(1 + crypto.randomInt(999_999))
      return { id, url: `https://t.me/${h}/${id}` }
    }
    case "discord": {
      const id = digits(19)
      return { id, url: `https://discord.com/channels/${digits(18)}/${digits(18)}/${id}` }
    }
  }
}

const hashInt = (text: string, salt: string, max: number): number =>
  crypto.createHash("sha256").update(`${salt}:${text}`).digest().readUInt32BE(0) % max

/** Plausible, stable metrics for a sandbox post. */
export const fakeMetrics = (platformPostId: string): Metrics => {
  const views = hashInt(platformPostId, "views", 5000)
  return new Metrics({
    views,
    impressions: views + hashInt(platformPostId, "impressions", 2000),
    likes: hashInt(platformPostId, "likes", Math.max(1, Math.floor(views / 10))),
    comments: hashInt(platformPostId, "comments", 40),
    shares: hashInt(platformPostId, "shares", 60),
    saves: hashInt(platformPostId, "saves", 30),
    clicks: hashInt(platformPostId, "clicks", 200)
  })
}

/**
 * The sandbox post's metrics `age` after it was published: `fakeMetrics` reached along a curve that
 * rises fast and levels off (a third after 6 hours, two thirds after a day), at least one view once
 * published. Deterministic: the same post at the same age has the same numbers.
 */
export const metricsAt = (platformPostId: string, age: Duration.Duration): Metrics => {
  const ms = Math.max(0, Duration.toMillis(age))
  const share = ms / (ms + Duration.toMillis(Duration.hours(12)))
  const final = fakeMetrics(platformPostId)
  const grown = (n: number) => Math.floor(n * share)
  return new Metrics({
    views: Math.max(ms > 0 ? 1 : 0, grown(final.views)),
    impressions: Math.max(ms > 0 ? 1 : 0, grown(final.impressions)),
    likes: grown(final.likes),
    comments: grown(final.comments),
    shares: grown(final.shares),
    saves: grown(final.saves),
    clicks: grown(final.clicks)
  })
}
