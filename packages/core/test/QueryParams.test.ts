import { describe, expect, it } from "@effect/vitest"
import * as QueryParams from "../src/kernel/QueryParams.js"

describe("QueryParams", () => {
  it("pageParams clamps limit into 1..100 (0, negative or junk give 20) and reads offset leniently", () => {
    const page = (limit?: string, offset?: string) => QueryParams.pageParams({ limit, offset })
    expect(page()).toEqual({ limit: 20, offset: 0 })
    expect(page("5", "40")).toEqual({ limit: 5, offset: 40 })
    expect(page(" 7 ", " 3 ")).toEqual({ limit: 7, offset: 3 })
    expect(page("500")).toEqual({ limit: 100, offset: 0 })
    expect(page("0")).toEqual({ limit: 20, offset: 0 })
    expect(page("-3", "-1")).toEqual({ limit: 20, offset: 0 })
    expect(page("ten", "1.5")).toEqual({ limit: 20, offset: 0 })
    expect(page(undefined, "99999999999999999999")).toEqual({ limit: 20, offset: 0 })
    expect(QueryParams.pageParams({ limit: ["3", "9"] })).toEqual({ limit: 3, offset: 0 })
  })

  it("listParam splits comma lists, trims and lower-cases; positiveInt takes whole numbers from 1", () => {
    expect(QueryParams.listParam({ status: ["Draft, scheduled", ",published"] }, "status")).toEqual([
      "draft",
      "scheduled",
      "published"
    ])
    expect(QueryParams.listParam({}, "status")).toEqual([])
    expect([QueryParams.positiveInt("1"), QueryParams.positiveInt("0"), QueryParams.positiveInt("x")]).toEqual([
      1,
      undefined,
      undefined
    ])
  })
})
