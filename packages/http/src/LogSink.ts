/**
 * Where the server's log lines go: stderr, in logfmt, one line per entry (one per request), written
 * in batches. Writing each line through `console.error` cost a formatting pass and a synchronous
 * `write(2)` on the pipe per request (a quarter of the CPU of a `GET /health/live`); lines are now
 * appended to a buffer that is written once per turn of the event loop (`setImmediate`), or at once
 * when it passes 64 KiB, and on `process.on("exit")` (a normal exit, `process.exit`, and an uncaught
 * exception all pass there), so no line is lost at shutdown. Only a `kill -9` can lose the lines of
 * the current turn, which were not yet answered to anyone either way but by microseconds.
 */
import * as Logger from "effect/Logger"

/** Buffer size at which lines are written without waiting for the end of the turn. */
export const highWaterChars = 64 * 1024

export interface Sink {
  /** Adds one line (without its newline). */
  readonly add: (line: string) => void
  /** Writes what is buffered now. */
  readonly flush: () => void
}

/** A sink over `write`, flushed at the end of each turn of the event loop and when large. */
export const make = (write: (chunk: string) => void): Sink => {
  let pending: Array<string> = []
  let size = 0
  let scheduled = false
  const flush = () => {
    scheduled = false
    if (pending.length === 0) return
    const chunk = pending.join("\n") + "\n"
    pending = []
    size = 0
    write(chunk)
  }
  const add = (line: string) => {
    pending.push(line)
    size += line.length + 1
    if (size >= highWaterChars) flush()
    else if (!scheduled) {
      scheduled = true
      setImmediate(flush)
    }
  }
  return { add, flush }
}

let stderrSink: Sink | undefined

/** The process's stderr sink: created once, flushed on exit. */
export const stderr = (): Sink => {
  if (stderrSink === undefined) {
    // process.stderr writes synchronously to files, TTYs and (on Linux) pipes.
    const sink = make((chunk) => void process.stderr.write(chunk))
    process.on("exit", sink.flush)
    stderrSink = sink
  }
  return stderrSink
}

/** Effect's logfmt logger, written to stderr through the batching sink. */
export const logfmtToStderr: Logger.Logger<unknown, void> = Logger.map(Logger.logfmtLogger, (line) => {
  stderr().add(line)
})
