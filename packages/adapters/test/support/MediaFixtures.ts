/**
 * Real, small media files built in memory for tests: PNG (zlib + CRC), baseline JPEG, GIF (LZW),
 * lossless WebP, MP4/QuickTime box structures, a WebM header and PDF. The images and the PDF decode
 * with the usual tools (libpng, djpeg, gif2rgb, dwebp, pdfinfo were used to check them). The MP4 and
 * WebM are header-only (MP4: ftyp, moov with mvhd and one video track, empty mdat; WebM: EBML header
 * and Segment Info), which is what type detection and metadata read; mediainfo reads their durations.
 */
import { deflateSync } from "node:zlib"

const encoder = new TextEncoder()

const concat = (parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let offset = 0
  for (const part of parts) {
    out.set(part, offset)
    offset += part.length
  }
  return out
}

const latin1 = (text: string): Uint8Array => Uint8Array.from(text, (c) => c.charCodeAt(0))

const u16be = (n: number) => Uint8Array.of(n >>> 8, n & 0xff)
const u16le = (n: number) => Uint8Array.of(n & 0xff, n >>> 8)
const u32be = (n: number) => Uint8Array.of(n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff)
const u32le = (n: number) => Uint8Array.of(n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, n >>> 24)

// ---------------------------------------------------------------------------------------------------
// PNG
// ---------------------------------------------------------------------------------------------------

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})

export const crc32 = (bytes: Uint8Array): number => {
  let c = 0xffffffff
  for (const b of bytes) c = crcTable[(c ^ b) & 0xff]! ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

const pngChunk = (type: string, data: Uint8Array): Uint8Array => {
  const body = concat([latin1(type), data])
  return concat([u32be(data.length), body, u32be(crc32(body))])
}

/** An 8-bit RGB PNG with a diagonal gradient. */
export const png = (width: number, height: number): Uint8Array => {
  const raw = new Uint8Array(height * (1 + width * 3))
  for (let y = 0; y < height; y++) {
    const row = y * (1 + width * 3)
    raw[row] = 0 // filter: none
    for (let x = 0; x < width; x++) {
      raw[row + 1 + x * 3] = (x * 255) / Math.max(1, width - 1)
      raw[row + 2 + x * 3] = (y * 255) / Math.max(1, height - 1)
      raw[row + 3 + x * 3] = 128
    }
  }
  const ihdr = concat([u32be(width), u32be(height), Uint8Array.of(8, 2, 0, 0, 0)])
  return concat([
    Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a),
    pngChunk("IHDR", ihdr),
    pngChunk("IDAT", deflateSync(raw)),
    pngChunk("IEND", new Uint8Array(0))
  ])
}

// ---------------------------------------------------------------------------------------------------
// JPEG
// ---------------------------------------------------------------------------------------------------

const jpegSegment = (marker: number, data: Uint8Array): Uint8Array =>
  concat([Uint8Array.of(0xff, marker), u16be(data.length + 2), data])

/** APP1 segments (at most 65,000 bytes each) filling about `bytes`, as a large EXIF block would. */
const padding = (bytes: number): ReadonlyArray<Uint8Array> => {
  const segments: Array<Uint8Array> = []
  for (let left = bytes; left > 0; left -= 65_000) {
    segments.push(jpegSegment(0xe1, concat([latin1("Herald\0"), new Uint8Array(Math.min(left, 65_000))])))
  }
  return segments
}

/**
 * A baseline grayscale JPEG of mid-gray. Every 8×8 block has a zero DC difference and no AC
 * coefficient, so with one-symbol Huffman tables (DC category 0 → `0`, AC end-of-block → `0`) each
 * block is two bits. APP1 padding of `paddingBytes` can push the frame header further in.
 */
export const jpeg = (width: number, height: number, paddingBytes = 0): Uint8Array => {
  const blocks = Math.ceil(width / 8) * Math.ceil(height / 8)
  const bits = blocks * 2
  const scan = new Uint8Array(Math.ceil(bits / 8))
  // All block bits are 0; the last byte is padded with 1 bits.
  const rest = bits % 8
  if (rest !== 0) scan[scan.length - 1] = (1 << (8 - rest)) - 1
  const huffman = (tableClass: number, symbol: number) =>
    concat([Uint8Array.of(tableClass << 4), Uint8Array.of(1, ...new Array<number>(15).fill(0)), Uint8Array.of(symbol)])
  return concat([
    Uint8Array.of(0xff, 0xd8),
    jpegSegment(0xe0, concat([latin1("JFIF\0"), Uint8Array.of(1, 1, 0), u16be(1), u16be(1), Uint8Array.of(0, 0)])),
    ...padding(paddingBytes),
    jpegSegment(0xdb, concat([Uint8Array.of(0), new Uint8Array(64).fill(1)])),
    jpegSegment(0xc0, concat([Uint8Array.of(8), u16be(height), u16be(width), Uint8Array.of(1, 1, 0x11, 0)])),
    jpegSegment(0xc4, huffman(0, 0)),
    jpegSegment(0xc4, huffman(1, 0)),
    jpegSegment(0xda, Uint8Array.of(1, 1, 0x00, 0, 63, 0)),
    scan,
    Uint8Array.of(0xff, 0xd9)
  ])
}

// ---------------------------------------------------------------------------------------------------
// GIF
// ---------------------------------------------------------------------------------------------------

/**
 * A two-colour GIF89a in a checkerboard. The LZW stream sends a clear code before every pair of
 * pixels, so the code table never grows past 3-bit codes: valid LZW, just not compressed.
 */
export const gif = (width: number, height: number): Uint8Array => {
  const clear = 4
  const end = 5
  const codes: Array<number> = []
  let n = 0
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (n % 2 === 0) codes.push(clear)
      codes.push((x + y) % 2)
      n++
    }
  }
  codes.push(end)
  const packed: Array<number> = []
  let acc = 0
  let bits = 0
  for (const code of codes) {
    acc |= code << bits
    bits += 3
    while (bits >= 8) {
      packed.push(acc & 0xff)
      acc >>>= 8
      bits -= 8
    }
  }
  if (bits > 0) packed.push(acc & 0xff)
  const blocks: Array<Uint8Array> = []
  for (let i = 0; i < packed.length; i += 255) {
    const block = packed.slice(i, i + 255)
    blocks.push(Uint8Array.of(block.length, ...block))
  }
  return concat([
    latin1("GIF89a"),
    u16le(width),
    u16le(height),
    Uint8Array.of(0x80, 0, 0), // global colour table of 2 entries
    Uint8Array.of(0, 0, 0, 255, 255, 255),
    Uint8Array.of(0x2c),
    u16le(0),
    u16le(0),
    u16le(width),
    u16le(height),
    Uint8Array.of(0),
    Uint8Array.of(2), // LZW minimum code size
    ...blocks,
    Uint8Array.of(0), // block terminator
    Uint8Array.of(0x3b)
  ])
}

// ---------------------------------------------------------------------------------------------------
// WebP (lossless)
// ---------------------------------------------------------------------------------------------------

class BitWriter {
  private readonly bytes: Array<number> = []
  private acc = 0
  private count = 0
  write(value: number, bits: number): this {
    for (let i = 0; i < bits; i++) {
      this.acc |= ((value >>> i) & 1) << this.count
      this.count++
      if (this.count === 8) {
        this.bytes.push(this.acc)
        this.acc = 0
        this.count = 0
      }
    }
    return this
  }
  finish(): Uint8Array {
    return Uint8Array.from(this.count > 0 ? [...this.bytes, this.acc] : this.bytes)
  }
}

/**
 * A lossless WebP (VP8L) of one opaque colour: no transforms, no colour cache, and five one-symbol
 * prefix codes (green, red, blue, alpha, distance), so every pixel is coded in zero bits. `extended`
 * wraps it in the extended format (a VP8X chunk first).
 */
export const webp = (
  width: number,
  height: number,
  options: { readonly rgb?: readonly [number, number, number]; readonly extended?: boolean } = {}
): Uint8Array => {
  const rgb = options.rgb ?? [40, 120, 200]
  const w = new BitWriter()
  w.write(0x2f, 8).write(width - 1, 14).write(height - 1, 14).write(0, 1).write(0, 3)
  w.write(0, 1) // no transform
  w.write(0, 1) // no colour cache
  w.write(0, 1) // no meta prefix codes
  const simple = (symbol: number) => {
    w.write(1, 1).write(0, 1) // simple code, one symbol
    if (symbol < 2) w.write(0, 1).write(symbol, 1)
    else w.write(1, 1).write(symbol, 8)
  }
  simple(rgb[1])
  simple(rgb[0])
  simple(rgb[2])
  simple(255)
  simple(0)
  const data = w.finish()
  const padded = data.length % 2 === 1 ? concat([data, Uint8Array.of(0)]) : data
  const image = concat([latin1("VP8L"), u32le(data.length), padded])
  // The extended format: a VP8X header (no features flagged) with the canvas size, then the image.
  const canvas = concat([
    latin1("VP8X"),
    u32le(10),
    new Uint8Array(4),
    u32le(width - 1).subarray(0, 3),
    u32le(height - 1).subarray(0, 3)
  ])
  const chunks = options.extended === true ? concat([canvas, image]) : image
  return concat([latin1("RIFF"), u32le(4 + chunks.length), latin1("WEBP"), chunks])
}

// ---------------------------------------------------------------------------------------------------
// MP4 / QuickTime
// ---------------------------------------------------------------------------------------------------

const box = (type: string, ...content: ReadonlyArray<Uint8Array>): Uint8Array => {
  const body = concat(content)
  return concat([u32be(body.length + 8), latin1(type), body])
}

const fullBox = (type: string, version: number, ...content: ReadonlyArray<Uint8Array>) =>
  box(type, Uint8Array.of(version, 0, 0, 0), ...content)

const identity = [0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000]
const quarterTurn = [0, 0x10000, 0, -0x10000 >>> 0, 0, 0, 0, 0, 0x40000000]

export interface MovieOptions {
  readonly width?: number
  readonly height?: number
  readonly durationMs?: number
  /** `isom` (MP4, the default), `qt  ` (QuickTime), `M4V ` … */
  readonly brand?: string
  /** The track matrix turns the picture a quarter (as phones record portrait video). */
  readonly rotated?: boolean
  /** Put `mdat` (of this many bytes) before `moov`, as a recorder without "fast start" does. */
  readonly mediaDataFirst?: number
  /** `mvhd`/`tkhd` version 1 (64-bit times). */
  readonly version1?: boolean
}

/** An ISO base media file: ftyp, moov (mvhd, one video trak with tkhd and mdia/hdlr), mdat. */
export const movie = (options: MovieOptions = {}): Uint8Array => {
  const { brand = "isom", durationMs = 2500, height = 360, rotated = false, version1 = false, width = 640 } = options
  const timescale = 1000
  const zeros = (n: number) => new Uint8Array(n)
  const times = version1 ? zeros(16) : zeros(8)
  const duration = version1 ? concat([u32be(0), u32be(durationMs)]) : u32be(durationMs)
  const matrix = concat((rotated ? quarterTurn : identity).map(u32be))
  const mvhd = fullBox(
    "mvhd",
    version1 ? 1 : 0,
    times,
    u32be(timescale),
    duration,
    u32be(0x10000), // rate 1.0
    u16be(0x100), // volume 1.0
    zeros(10),
    concat(identity.map(u32be)),
    zeros(24),
    u32be(2) // next track id
  )
  const tkhd = fullBox(
    "tkhd",
    version1 ? 1 : 0,
    times,
    u32be(1), // track id
    zeros(4),
    duration,
    zeros(8),
    u16be(0),
    u16be(0),
    u16be(0),
    zeros(2),
    matrix,
    u32be(width * 0x10000),
    u32be(height * 0x10000)
  )
  const mdhd = fullBox("mdhd", 0, zeros(8), u32be(timescale), u32be(durationMs), u16be(0x55c4), zeros(2))
  const hdlr = fullBox("hdlr", 0, zeros(4), latin1("vide"), zeros(12), latin1("VideoHandler\0"))
  const trak = box("trak", tkhd, box("mdia", mdhd, hdlr))
  const moov = box("moov", mvhd, trak)
  const ftyp = box("ftyp", latin1(brand.padEnd(4, " ")), u32be(0x200), latin1("isomiso2avc1mp41"))
  return options.mediaDataFirst === undefined
    ? concat([ftyp, moov, box("mdat")])
    : concat([ftyp, box("mdat", zeros(options.mediaDataFirst)), moov])
}

// ---------------------------------------------------------------------------------------------------
// WebM
// ---------------------------------------------------------------------------------------------------

const ebml = (id: ReadonlyArray<number>, ...content: ReadonlyArray<Uint8Array>): Uint8Array => {
  const body = concat(content)
  // An 8-byte size field: 0x01 then seven bytes of length.
  const size = Uint8Array.of(0x01, 0, 0, 0, ...u32be(body.length))
  return concat([Uint8Array.from(id), size, body])
}

/** A header-only WebM: the EBML header (DocType `webm`) and a Segment with its Info (duration). */
export const webm = (durationMs = 1500): Uint8Array => {
  const duration = new Uint8Array(8)
  new DataView(duration.buffer).setFloat64(0, durationMs)
  return concat([
    ebml(
      [0x1a, 0x45, 0xdf, 0xa3],
      ebml([0x42, 0x86], Uint8Array.of(1)),
      ebml([0x42, 0xf7], Uint8Array.of(1)),
      ebml([0x42, 0xf2], Uint8Array.of(4)),
      ebml([0x42, 0xf3], Uint8Array.of(8)),
      ebml([0x42, 0x82], latin1("webm")),
      ebml([0x42, 0x87], Uint8Array.of(4)),
      ebml([0x42, 0x85], Uint8Array.of(2))
    ),
    ebml(
      [0x18, 0x53, 0x80, 0x67],
      ebml([0x15, 0x49, 0xa9, 0x66], ebml([0x2a, 0xd7, 0xb1], u32be(1_000_000)), ebml([0x44, 0x89], duration))
    )
  ])
}

// ---------------------------------------------------------------------------------------------------
// PDF
// ---------------------------------------------------------------------------------------------------

/** A one-page PDF 1.4 with a line of text, its cross-reference table at the right offsets. */
export const pdf = (text = "Herald"): Uint8Array => {
  const stream = `BT /F1 24 Tf 72 720 Td (${text.replace(/[()\\]/g, "\\$&")}) Tj ET`
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
  ]
  let body = "%PDF-1.4\n%\u00e2\u00e3\u00cf\u00d3\n"
  const offsets: Array<number> = []
  for (const [i, object] of objects.entries()) {
    offsets.push(body.length)
    body += `${i + 1} 0 obj\n${object}\nendobj\n`
  }
  const xref = body.length
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`
  for (const offset of offsets) body += `${String(offset).padStart(10, "0")} 00000 n \n`
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`
  // The binary-marker comment is Latin-1, so offsets count one byte per character.
  return latin1(body)
}

/** Bytes that no detector recognises. */
export const noise = (length: number): Uint8Array =>
  encoder.encode("just some text, no magic here\n".repeat(length)).subarray(0, length)
