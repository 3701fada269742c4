import { describe, expect, it } from "@effect/vitest"
import { OrganizationId, PostId } from "@herald/core/kernel/Ids"
import { unchecked } from "@herald/core/kernel/Unchecked"
import { Event } from "@herald/core/webhooks/Event"
import * as DateTime from "effect/DateTime"
import * as Equal from "effect/Equal"
import * as Hash from "effect/Hash"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

describe("Unchecked.unchecked", () => {
  const fields = {
    id: "0b8f5c1e-3c1a-4c55-9a43-7d0c2b0e9f11" as Event["id"],
    organizationId: OrganizationId.make("6f1d2a3b-4c5d-4e6f-8a7b-9c0d1e2f3a4b"),
    type: "post.published" as const,
    data: { post_id: PostId.make("1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"), attempt: 1 },
    createdAt: DateTime.unsafeMake(1_790_000_000_000),
    traceParent: Option.none<string>()
  }

  it("makes what the class's constructor makes: prototype, own keys in order, equality and hash", () => {
    // Without validation, which would copy `data` (then no two constructed events are Equal either).
    const constructed = new Event(fields, true)
    const made = unchecked(Event, fields)
    expect(made).toBeInstanceOf(Event)
    expect(Object.getPrototypeOf(made)).toBe(Object.getPrototypeOf(constructed))
    expect(Object.keys(made)).toEqual(Object.keys(constructed))
    expect(made).toStrictEqual(constructed)
    expect(Equal.equals(made, constructed)).toBe(true)
    expect(Hash.hash(made)).toBe(Hash.hash(constructed))
    expect(Schema.is(Event)(made)).toBe(true)
    expect(Schema.encodeSync(Event)(made)).toStrictEqual(Schema.encodeSync(Event)(constructed))
  })

  it("copies the fields: a later change to the object given does not reach the instance", () => {
    const given = { ...fields }
    const made = unchecked(Event, given)
    ;(given as { id: string }).id = "changed"
    expect(made.id).toBe(fields.id)
  })
})
