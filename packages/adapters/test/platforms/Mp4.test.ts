import { describe, expect, it } from "@effect/vitest"
import * as Mp4 from "../../src/platforms/internal/Mp4.js"
import { mp4 } from "./fakes/YouTubeApiFake.js"

const box = (type: string, payload: Uint8Array, large = false): Uint8Array => {
  const header = large ? 16 : 8
  const out = new Uint8Array(header + payload.length)
  const view = new DataView(out.buffer)
  if (large) {
    view.setUint32(0, 1)
    view.setBigUint64(8, BigInt(out.length))
  } else {
    view.setUint32(0, out.length)
  }
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i)
  out.set(payload, header)
  return out
}

const concat = (...parts: Array<Uint8Array>) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

describe("Mp4.videoInfo", () => {
  it("reads the video track's size (skipping the audio track) and the duration", () => {
    expect(Mp4.videoInfo(mp4({ width: 1920, height: 1080, seconds: 12.5, size: 2000 }))).toEqual({
      width: 1920,
      height: 1080,
      durationSeconds: 12.5
    })
  })

  it("swaps width and height for a track rotated by 90 degrees", () => {
    expect(Mp4.videoInfo(mp4({ width: 1920, height: 1080, seconds: 3, size: 500, rotate90: true }))).toMatchObject({
      width: 1080,
      height: 1920
    })
  })

  it("reads version-1 boxes (64-bit times) inside a 64-bit-sized moov", () => {
    const mvhd = new Uint8Array(112)
    const m = new DataView(mvhd.buffer)
    m.setUint8(0, 1)
    m.setUint32(20, 600)
    m.setBigUint64(24, 600n * 200n)
    const tkhd = new Uint8Array(96)
    const t = new DataView(tkhd.buffer)
    t.setUint8(0, 1)
    t.setInt32(52, 0x10000)
    t.setInt32(68, 0x10000)
    t.setUint32(88, 720 * 65536)
    t.setUint32(92, 1280 * 65536)
    const file = concat(
      box("ftyp", new Uint8Array(8)),
      box("moov", concat(box("mvhd", mvhd), box("trak", box("tkhd", tkhd))), true)
    )
    expect(Mp4.videoInfo(file)).toEqual({ width: 720, height: 1280, durationSeconds: 200 })
  })

  it("is undefined without a readable moov", () => {
    expect(Mp4.videoInfo(new Uint8Array(100).fill(7))).toBeUndefined()
    expect(Mp4.videoInfo(mp4({ width: 10, height: 10, seconds: 1, size: 400 }).subarray(0, 60))).toBeUndefined()
    expect(Mp4.videoInfo(new Uint8Array(0))).toBeUndefined()
  })
})
