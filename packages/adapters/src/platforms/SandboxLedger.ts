/**
 * The sandbox's ledger: one JSON line per post it published, shared by every process of a deployment
 * (so an abandoned attempt is found as a real platform would find it), read back whole lines only.
 */
import { type Platform } from "@herald/core/domain/Platform"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"

/** One post the sandbox published, as its ledger keeps it. */
export interface LedgerEntry {
  readonly platform: Platform
  readonly destinationId: string
  readonly attempt: number
  readonly platformPostId: string
  readonly platformPostUrl: string
  readonly at: number
}

/** The ledger's entries; a line cut short by a killed process is not a whole entry and is skipped. */
export const readLedger = (file: string): ReadonlyArray<LedgerEntry> => {
  if (!fs.existsSync(file)) return []
  return fs.readFileSync(file, "utf8").split("\n").flatMap((line) => {
    if (line.length === 0) return []
    try {
      return [JSON.parse(line) as LedgerEntry]
    } catch {
      return []
    }
  })
}

/**
 * The ledger's entries by platform, destination and attempt, read incrementally: each lookup reads
 * only the bytes appended since the last one (a dead process's take-over asks once per destination it
 * held; re-reading the whole ledger each time made settling 1,400 claims take minutes). A line still
 * being written is left for the next read; a file that shrank (replaced) is read again from the start.
 */
interface LedgerIndex {
  offset: number
  tail: string
  readonly entries: Map<string, LedgerEntry>
}

const ledgerIndexes = new Map<string, LedgerIndex>()

const ledgerKey = (platform: string, destinationId: string, attempt: number) =>
  `${platform}\u0000${destinationId}\u0000${attempt}`

/** The ledger entry for one attempt, if any process of the deployment recorded it. */
export const findInLedger = (
  file: string,
  platform: Platform,
  destinationId: string,
  attempt: number
): LedgerEntry | undefined => {
  let index = ledgerIndexes.get(file)
  if (index === undefined) {
    index = { offset: 0, tail: "", entries: new Map() }
    ledgerIndexes.set(file, index)
  }
  if (!fs.existsSync(file)) return undefined
  const fd = fs.openSync(file, "r")
  try {
    const size = fs.fstatSync(fd).size
    if (size < index.offset) {
      index.offset = 0
      index.tail = ""
      index.entries.clear()
    }
    if (size > index.offset) {
      const buffer = Buffer.alloc(size - index.offset)
      let read = 0
      while (read < buffer.length) {
        const n = fs.readSync(fd, buffer, read, buffer.length - read, index.offset + read)
        if (n === 0) break
        read += n
      }
      index.offset += read
      const lines = (index.tail + buffer.subarray(0, read).toString("utf8")).split("\n")
      index.tail = lines.pop() ?? ""
      for (const line of lines) {
        if (line.length === 0) continue
        try {
          const entry = JSON.parse(line) as LedgerEntry
          index.entries.set(ledgerKey(entry.platform, entry.destinationId, entry.attempt), entry)
        } catch {
          // A line cut short by a killed process, followed by the next process's whole lines.
        }
      }
    }
  } finally {
    fs.closeSync(fd)
  }
  return index.entries.get(ledgerKey(platform, destinationId, attempt))
}

/**
 * Where the sandbox appends its lines (ledger, journal). Each line is one whole `write` on a file opened
 * with O_APPEND, so lines of several processes never interleave mid-line, and a line is in the file
 * when `append` returns; a process killed mid-write leaves at most a cut last line, which readers skip.
 */
export interface LineFiles {
  readonly append: (file: string, line: string) => void
}

/** Opens, writes and closes the file per line (`appendFileSync`): for clients made outside a scope. */
export const appendPerLine: LineFiles = { append: (file, line) => fs.appendFileSync(file, line, { mode: 0o600 }) }

const writeWhole = (fd: number, line: string): void => {
  const bytes = Buffer.from(line, "utf8")
  let offset = 0
  // A regular file takes the whole line in one write(); the loop only covers a short write.
  while (offset < bytes.length) offset += fs.writeSync(fd, bytes, offset, bytes.length - offset)
}

/**
 * Files opened once, on their first line (a file nothing was written to is not created), with O_APPEND,
 * and closed when the scope closes.
 */
export const openLineFiles: Effect.Effect<LineFiles, never, Scope.Scope> = Effect.acquireRelease(
  Effect.sync(() => new Map<string, number>()),
  (fds) =>
    Effect.sync(() => {
      for (const fd of fds.values()) fs.closeSync(fd)
      fds.clear()
    })
).pipe(Effect.map((fds): LineFiles => ({
  append: (file, line) => {
    let fd = fds.get(file)
    if (fd === undefined) {
      fd = fs.openSync(file, "a", 0o600)
      fds.set(file, fd)
    }
    writeWhole(fd, line)
  }
})))
