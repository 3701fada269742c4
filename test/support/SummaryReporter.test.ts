import { describe, expect, it } from "vitest"
import type { RunnerTestFile } from "vitest/node"
import { slowest } from "./SummaryReporter.js"

const file = (name: string, collect: number, setup: number, run: number) =>
  ({
    name,
    collectDuration: collect,
    setupDuration: setup,
    result: { state: "pass", duration: run }
  }) as unknown as RunnerTestFile

describe("SummaryReporter", () => {
  it("names the slowest files first, counting collection, set-up and the tests", () => {
    const files = [file("a.test.ts", 100, 0, 900), file("b.test.ts", 2000, 500, 500), file("c.test.ts", 0, 0, 50)]
    expect(slowest(files, 2)).toEqual([
      { name: "b.test.ts", seconds: 3 },
      { name: "a.test.ts", seconds: 1 }
    ])
  })
})
