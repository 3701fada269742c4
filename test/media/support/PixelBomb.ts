/**
 * PNGs whose header declares many pixels while the file stays small: a flat picture compresses to
 * almost nothing. `header` writes only the signature, IHDR and an empty image (a file no decoder
 * should ever be asked to open); `flat` writes the real pixel data (deflated zeros), for renditions.
 */
import * as zlib from "node:zlib"

const chunk = (type: string, data: Buffer): Buffer => {
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const body = Buffer.concat([Buffer.from(type, "ascii"), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(zlib.crc32(body))
  return Buffer.concat([length, body, crc])
}

const ihdr = (width: number, height: number): Buffer => {
  const data = Buffer.alloc(13)
  data.writeUInt32BE(width, 0)
  data.writeUInt32BE(height, 4)
  data[8] = 8 // bit depth
  data[9] = 0 // greyscale
  return chunk("IHDR", data)
}

const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

/** A PNG that declares `width` x `height` and holds one row of data: a few dozen bytes. */
export const header = (width: number, height: number): Uint8Array =>
  new Uint8Array(Buffer.concat([
    signature,
    ihdr(width, height),
    chunk("IDAT", zlib.deflateSync(Buffer.alloc(1))),
    chunk("IEND", Buffer.alloc(0))
  ]))

/** A whole, valid flat-black PNG of `width` x `height` (the deflated rows take ~1/1000 of the pixels). */
export const flat = (width: number, height: number): Uint8Array =>
  new Uint8Array(Buffer.concat([
    signature,
    ihdr(width, height),
    // Each row is its filter byte (0) and `width` zero samples.
    chunk("IDAT", zlib.deflateSync(Buffer.alloc((width + 1) * height), { level: 9 })),
    chunk("IEND", Buffer.alloc(0))
  ]))
