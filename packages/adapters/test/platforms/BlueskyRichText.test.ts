import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as RichText from "../../src/platforms/BlueskyRichText.js"

// Independent of the module under test: byte offsets from a fresh encoder.
const enc = new TextEncoder()
const bytes = (s: string) => enc.encode(s).length
/** The byte span of the first occurrence of `needle` in `text`, computed with TextEncoder. */
const span = (text: string, needle: string, from = 0) => {
  const i = text.indexOf(needle, from)
  expect(i).toBeGreaterThanOrEqual(0)
  return { byteStart: bytes(text.slice(0, i)), byteEnd: bytes(text.slice(0, i)) + bytes(needle) }
}
/** What the byte span covers, decoded back from UTF-8. */
const covered = (text: string, index: RichText.ByteSlice) =>
  new TextDecoder().decode(enc.encode(text).slice(index.byteStart, index.byteEnd))

const facetsOf = (text: string, dids: Record<string, string> = {}) =>
  Effect.runSync(RichText.resolve(RichText.detect(text), (h) => Effect.succeed(Option.fromNullable(dids[h]))))

describe("Bluesky rich-text facets", () => {
  it("link after emoji: offsets are UTF-8 bytes, not UTF-16 units", () => {
    const text = "✨🚀 launch day https://herald.example/post?id=1 🎉"
    const [facet] = facetsOf(text)
    expect(facet!.index).toEqual(span(text, "https://herald.example/post?id=1"))
    // 🚀 is two UTF-16 units but four bytes: a UTF-16 offset would be visibly wrong.
    expect(facet!.index.byteStart).not.toBe(text.indexOf("https://"))
    expect(facet!.features).toEqual([{
      $type: "app.bsky.richtext.facet#link",
      uri: "https://herald.example/post?id=1"
    }])
    expect(covered(text, facet!.index)).toBe("https://herald.example/post?id=1")
  })

  it("mention and hashtag after CJK text", () => {
    const text = "日本語のテキスト @alice.bsky.social さん #東京 と #rust"
    const facets = facetsOf(text, { "alice.bsky.social": "did:plc:alice123" })
    expect(facets).toEqual([
      {
        index: span(text, "@alice.bsky.social"),
        features: [{ $type: "app.bsky.richtext.facet#mention", did: "did:plc:alice123" }]
      },
      { index: span(text, "#東京"), features: [{ $type: "app.bsky.richtext.facet#tag", tag: "東京" }] },
      { index: span(text, "#rust"), features: [{ $type: "app.bsky.richtext.facet#tag", tag: "rust" }] }
    ])
    expect(facets.map((f) => covered(text, f.index))).toEqual(["@alice.bsky.social", "#東京", "#rust"])
  })

  it("emoji hashtags and ZWJ sequences before a facet", () => {
    const text = "👩‍👩‍👧‍👦 family #🎉party! see example.com."
    const facets = facetsOf(text)
    expect(facets.map((f) => covered(text, f.index))).toEqual(["#🎉party", "example.com"])
    expect(facets[0]!.index).toEqual(span(text, "#🎉party"))
    expect(facets[0]!.features).toEqual([{ $type: "app.bsky.richtext.facet#tag", tag: "🎉party" }])
    expect(facets[1]!.features).toEqual([{ $type: "app.bsky.richtext.facet#link", uri: "https://example.com" }])
  })

  it("unresolved mentions are dropped; each handle is resolved once", () => {
    const text = "@ghost.bsky.social and @bob.test and @bob.test"
    const calls: Array<string> = []
    const facets = Effect.runSync(RichText.resolve(RichText.detect(text), (h) => {
      calls.push(h)
      return Effect.succeed(h === "bob.test" ? Option.some("did:plc:bob") : Option.none())
    }))
    expect(calls).toEqual(["ghost.bsky.social", "bob.test"])
    expect(facets.map((f) => f.index)).toEqual([
      span(text, "@bob.test"),
      span(text, "@bob.test", text.indexOf("@bob") + 1)
    ])
  })

  it("links: trailing punctuation and an unbalanced closing paren are stripped", () => {
    const text = "(see https://a.example/x) and https://b.example/y. Also (https://w.example/wiki/Foo_(bar))"
    const facets = facetsOf(text)
    expect(facets.map((f) => (f.features[0] as { uri: string }).uri)).toEqual([
      "https://a.example/x",
      "https://b.example/y",
      "https://w.example/wiki/Foo_(bar))"
    ])
    expect(covered(text, facets[0]!.index)).toBe("https://a.example/x")
    expect(covered(text, facets[1]!.index)).toBe("https://b.example/y")
  })

  it("things that are not facets: emails, file names, pure-digit tags, tags inside words, too-long tags", () => {
    const long = "#" + "a".repeat(66)
    const text = `mail bob@example.com, open notes.txt, issue #123, a#b, ${long}`
    expect(facetsOf(text)).toEqual([])
    const ok = "#" + "a".repeat(65)
    expect(facetsOf(ok).map((f) => covered(ok, f.index))).toEqual([ok])
  })

  it("graphemes and bytes count as Bluesky counts them", () => {
    expect(RichText.graphemeLength("👩‍👩‍👧‍👦é")).toBe(2)
    expect(RichText.utf8Length("👩‍👩‍👧‍👦é")).toBe(bytes("👩‍👩‍👧‍👦é"))
  })
})
