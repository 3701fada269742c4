/**
 * The sandbox AI and its PNG encoder: real PNGs (signature, IHDR, CRCs, pixels that inflate back), of
 * exactly the requested aspect ratio, read by the media inspector; captions that are deterministic
 * and follow the request (count, hashtags, emojis, length).
 */
import { describe, expect, it } from "@effect/vitest"
import { AspectRatio } from "@herald/core/ai/ImageGenerator"
import { inflateSync } from "node:zlib"
import * as AiSandbox from "../../src/ai/AiSandbox.js"
import * as Png from "../../src/ai/Png.js"
import { pngDimensions } from "../../src/media/MediaInspector.js"

const chunks = (png: Uint8Array) => {
  const buf = Buffer.from(png)
  const out: Array<{ type: string; data: Buffer; crcOk: boolean }> = []
  let at = 8
  while (at < buf.length) {
    const length = buf.readUInt32BE(at)
    const type = buf.toString("ascii", at + 4, at + 8)
    const data = buf.subarray(at + 8, at + 8 + length)
    const crc = buf.readUInt32BE(at + 8 + length)
    out.push({ type, data, crcOk: Png.crc32(buf.subarray(at + 4, at + 8 + length)) === crc })
    at += 12 + length
  }
  return out
}

describe("sandbox AI", () => {
  it("encodes a valid PNG whose pixels inflate back", () => {
    const png = Png.encodeRgb(3, 2, (x, y) => [x * 10, y * 20, 255])
    expect(Array.from(png.subarray(0, 8))).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
    const parts = chunks(png)
    expect(parts.map((c) => c.type)).toEqual(["IHDR", "IDAT", "IEND"])
    expect(parts.every((c) => c.crcOk)).toBe(true)
    const raw = inflateSync(parts[1]!.data)
    expect(raw.length).toBe(2 * (1 + 3 * 3))
    expect(Array.from(raw.subarray(0, 10))).toEqual([0, 0, 0, 255, 10, 0, 255, 20, 0, 255])
    expect(Png.crc32(new TextEncoder().encode("123456789"))).toBe(0xcbf43926)
  })

  it("draws every aspect ratio exactly, deterministically per prompt", () => {
    for (const ratio of AspectRatio.literals) {
      const png = AiSandbox.image("a red bicycle", ratio)
      const dims = pngDimensions(png)!
      const [w, h] = ratio.split(":").map(Number) as [number, number]
      expect(dims.width * h).toBe(dims.height * w)
      expect(Math.max(dims.width, dims.height)).toBeGreaterThanOrEqual(256)
      expect(Math.max(dims.width, dims.height)).toBeLessThanOrEqual(320)
    }
    expect(Buffer.from(AiSandbox.image("a", "1:1")).equals(Buffer.from(AiSandbox.image("a", "1:1")))).toBe(true)
    expect(Buffer.from(AiSandbox.image("a", "1:1")).equals(Buffer.from(AiSandbox.image("b", "1:1")))).toBe(false)
  })

  it("writes deterministic captions that follow the request", () => {
    const base = {
      topic: "spring coffee menu",
      tone: "enthusiastic",
      length: "long",
      includeHashtags: true,
      includeEmojis: true,
      count: 4
    } as const
    const first = AiSandbox.captions(base)
    expect(first).toEqual(AiSandbox.captions(base))
    expect(first).toHaveLength(4)
    expect(new Set(first).size).toBe(4)
    for (const c of first) {
      expect(c).toContain("spring coffee menu")
      expect(c).toContain("#Spring #Coffee #Menu")
    }
    expect(AiSandbox.captions({ ...base, topic: "Fresh bread every morning at our bakery", count: 1 })[0]).toContain(
      "#Fresh #Bread #Morning"
    )
    for (const c of first) {
      expect(c.startsWith("🎉")).toBe(true)
    }
    const plain = AiSandbox.captions({
      ...base,
      length: "short",
      includeHashtags: false,
      includeEmojis: false,
      count: 1
    })
    expect(plain).toHaveLength(1)
    expect(plain[0]).not.toContain("#")
    expect(plain[0]!.length).toBeLessThan(first[0]!.length)
  })
})
