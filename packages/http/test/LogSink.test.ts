import { spawnSync } from "node:child_process"
import * as path from "node:path"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as Redacted from "effect/Redacted"
import { describe, expect, it } from "vitest"
import * as LogSink from "../src/LogSink.js"

const tick = () => new Promise<void>((resolve) => setImmediate(resolve))

describe("LogSink", () => {
  it("writes the lines of one turn of the event loop in one write, in order, each on its own line", async () => {
    const writes: Array<string> = []
    const sink = LogSink.make((chunk) => writes.push(chunk))
    sink.add("a=1")
    sink.add("b=2")
    sink.add("c=3")
    expect(writes).toEqual([])
    await tick()
    expect(writes).toEqual(["a=1\nb=2\nc=3\n"])
    sink.add("d=4")
    await tick()
    expect(writes).toEqual(["a=1\nb=2\nc=3\n", "d=4\n"])
  })

  it("writes at once when the buffer passes its high-water mark", () => {
    const writes: Array<string> = []
    const sink = LogSink.make((chunk) => writes.push(chunk))
    const line = "x".repeat(1000)
    for (let i = 0; i < 70; i++) sink.add(line)
    expect(writes.length).toBe(1)
    expect(writes[0]!.split("\n").length - 1).toBeGreaterThanOrEqual(65)
  })

  it("loses no line when the process exits right after logging (process.exit, uncaught exception)", () => {
    const module = path.join(import.meta.dirname, "../src/LogSink.ts")
    for (const ending of ["process.exit(3)", "throw new Error('boom')"]) {
      const script = `import * as LogSink from ${JSON.stringify(module)}
for (let i = 0; i < 5; i++) LogSink.stderr().add("line=" + i)
${ending}`
      const result = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
        encoding: "utf8",
        cwd: path.join(import.meta.dirname, "../../..")
      })
      expect(result.stderr).toContain("line=0\nline=1\nline=2\nline=3\nline=4\n")
    }
  })
})

describe("LogSink.jsonLine", () => {
  /** The line a logger writes for `effect`, as JSON. */
  const lineOf = (effect: Effect.Effect<void>): Record<string, unknown> => {
    const written: Array<string> = []
    const capture = Logger.replace(
      Logger.defaultLogger,
      Logger.make((options) => void written.push(LogSink.jsonLine(options)))
    )
    Effect.runSync(effect.pipe(Effect.provide(capture)))
    expect(written.length).toBe(1)
    return JSON.parse(written[0]!) as Record<string, unknown>
  }

  it("timestamp, level and message first, annotations at the top level; the entry's own fields win", () => {
    const line = lineOf(
      Effect.logWarning("publish failed", 3).pipe(
        Effect.annotateLogs({ post_id: "p-1", attempt: 2, message: "not the message", ok: true })
      )
    )
    expect(Object.keys(line).slice(0, 3)).toEqual(["timestamp", "level", "message"])
    expect(line).toMatchObject({ level: "warning", message: "publish failed 3", post_id: "p-1", attempt: 2, ok: true })
    expect(new Date(String(line["timestamp"])).toISOString()).toBe(line["timestamp"])
    expect(line["cause"]).toBeUndefined()
  })

  it("redacts credentials: annotated under a credential's name, or shaped like one in the message or cause", () => {
    const key = "pe_live_0123456789abcdef0123456789abcdef"
    const line = lineOf(
      Effect.logError(
        `refused ${key} with Authorization: Bearer abc.def-ghi_jkl`,
        Cause.fail(new Error(`whsec_${"A".repeat(24)}`))
      ).pipe(
        Effect.annotateLogs({ token: "tok-123", Password: "hunter2", secret: Redacted.make("s3") })
      )
    )
    const text = JSON.stringify(line)
    for (const value of [key, "abc.def-ghi_jkl", "tok-123", "hunter2", "whsec_AAAA", "s3\""]) {
      expect([value, text.includes(value)]).toEqual([value, false])
    }
    expect(line).toMatchObject({ token: "<redacted>", Password: "<redacted>", secret: "<redacted>", level: "error" })
    expect(line["message"]).toBe("refused <redacted> with Authorization: Bearer <redacted>")
    expect(String(line["cause"])).toContain("<redacted>")
  })

  it("HERALD_LOG_FORMAT: json, else logfmt", () => {
    expect(LogSink.formatFrom("JSON")).toBe("json")
    expect(LogSink.formatFrom(" json ")).toBe("json")
    expect(LogSink.formatFrom(undefined)).toBe("logfmt")
    expect(LogSink.formatFrom("logfmt")).toBe("logfmt")
  })
})
