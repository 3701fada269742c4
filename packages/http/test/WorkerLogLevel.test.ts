/**
 * `HERALD_LOG_LEVEL` sets `herald worker`'s minimum log level (default Info): lines below it are not
 * written. The start-up gate refuses a value it does not know.
 */
import * as Effect from "effect/Effect"
import * as LogLevel from "effect/LogLevel"
import { afterEach, describe, expect, it, vi } from "vitest"
import * as Config from "../src/Config.js"
import * as LogSink from "../src/LogSink.js"
import * as Worker from "../src/Worker.js"

const written = async (level: LogLevel.LogLevel): Promise<string> => {
  const chunks: Array<string> = []
  const spy = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
    chunks.push(String(chunk))
    return true
  })
  try {
    await Effect.runPromise(
      Effect.zipRight(Effect.logInfo("info line"), Effect.logWarning("warning line")).pipe(
        Effect.provide(Worker.logging(level))
      )
    )
    LogSink.stderr().flush()
  } finally {
    spy.mockRestore()
  }
  return chunks.join("")
}

afterEach(() => vi.restoreAllMocks())

describe("herald worker log level", () => {
  it("reads HERALD_LOG_LEVEL, Info when unset or blank", () => {
    expect(Worker.logLevelFrom(undefined)).toBe(LogLevel.Info)
    expect(Worker.logLevelFrom(" ")).toBe(LogLevel.Info)
    expect(Worker.logLevelFrom("warning")).toBe(LogLevel.Warning)
    expect(Worker.logLevelFrom("WARNING")).toBe(LogLevel.Warning)
    expect(Worker.logLevelFrom("debug")).toBe(LogLevel.Debug)
    expect(Worker.logLevelFrom("error")).toBe(LogLevel.Error)
    expect(Worker.logLevelFrom("none")).toBe(LogLevel.None)
  })

  it("writes Info lines by default and drops them at warning", async () => {
    const info = await written(Worker.logLevelFrom(undefined))
    expect(info).toMatch(/level=INFO .*message="info line"/)
    expect(info).toMatch(/level=WARN .*message="warning line"/)
    const warning = await written(Worker.logLevelFrom("warning"))
    expect(warning).not.toContain("info line")
    expect(warning).toMatch(/level=WARN .*message="warning line"/)
  })

  it("is checked at start-up", () => {
    expect(Config.problems({ HERALD_LOG_LEVEL: "warning" })).toEqual([])
    expect(Config.problems({ HERALD_LOG_LEVEL: "loud" })).toEqual([
      "HERALD_LOG_LEVEL: expected one of debug, info, warning, error, none, got 'loud'"
    ])
  })
})
