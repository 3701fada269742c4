import { spawnSync } from "node:child_process"
import * as path from "node:path"
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
