/**
 * Reads a video's display size and duration from its MP4/QuickTime boxes (`moov/mvhd` for the
 * duration, the video track's `moov/trak/tkhd` for the size and rotation). The port's media carries
 * neither, and YouTube needs both to tell a Short from a regular video.
 */

export interface VideoInfo {
  /** As displayed: width and height are swapped for a track rotated by 90 or 270 degrees. */
  readonly width: number
  readonly height: number
  readonly durationSeconds: number | undefined
}

interface Box {
  readonly type: string
  readonly start: number
  readonly end: number
}

const boxes = (view: DataView, from: number, to: number): ReadonlyArray<Box> => {
  const out: Array<Box> = []
  let offset = from
  while (offset + 8 <= to) {
    let size = view.getUint32(offset)
    const type = String.fromCharCode(
      view.getUint8(offset + 4),
      view.getUint8(offset + 5),
      view.getUint8(offset + 6),
      view.getUint8(offset + 7)
    )
    let header = 8
    if (size === 1) {
      if (offset + 16 > to) break
      size = Number(view.getBigUint64(offset + 8))
      header = 16
    } else if (size === 0) {
      size = to - offset
    }
    if (size < header || offset + size > to) {
      out.push({ type, start: offset + header, end: to })
      break
    }
    out.push({ type, start: offset + header, end: offset + size })
    offset += size
  }
  return out
}

const child = (view: DataView, parent: Box, type: string) =>
  boxes(view, parent.start, parent.end).filter((b) => b.type === type)

/** The size and duration, or `undefined` when the bytes hold no readable `moov`. */
export const videoInfo = (bytes: Uint8Array): VideoInfo | undefined => {
  try {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    const moov = boxes(view, 0, bytes.byteLength).find((b) => b.type === "moov")
    if (moov === undefined) return undefined
    let durationSeconds: number | undefined = undefined
    const mvhd = child(view, moov, "mvhd")[0]
    if (mvhd !== undefined) {
      const version = view.getUint8(mvhd.start)
      const timescale = view.getUint32(mvhd.start + (version === 1 ? 20 : 12))
      const duration = version === 1
        ? Number(view.getBigUint64(mvhd.start + 24))
        : view.getUint32(mvhd.start + 16)
      if (timescale > 0) durationSeconds = duration / timescale
    }
    for (const trak of child(view, moov, "trak")) {
      const tkhd = child(view, trak, "tkhd")[0]
      if (tkhd === undefined) continue
      const matrix = tkhd.start + (view.getUint8(tkhd.start) === 1 ? 52 : 40)
      const width = view.getUint32(matrix + 36) / 65536
      const height = view.getUint32(matrix + 40) / 65536
      if (width <= 0 || height <= 0) continue // an audio track
      const a = view.getInt32(matrix)
      const d = view.getInt32(matrix + 16)
      const rotated = a === 0 && d === 0
      return rotated
        ? { width: height, height: width, durationSeconds }
        : { width, height, durationSeconds }
    }
    return undefined
  } catch {
    return undefined
  }
}
