/**
 * The calendar's week by hour in Debian's Chromium against `herald serve --sandbox`, in Europe/Berlin:
 * a post sits in the cell of its hour in the viewer's zone; dragged to another day and hour it moves
 * there (the API's scheduled_for says so) and Undo moves it back; an empty hour composes a post for
 * that hour; the queue's openings (set in America/New_York) are drawn as free slots at the viewer's
 * hours, across the week New York changes its clocks and Berlin does not. Screenshots go to
 * test-artifacts/dashboard/.
 */
import * as QueuePolicy from "@herald/core/workflow/QueuePolicy"
import * as QueuesUseCase from "@herald/core/workflow/Queues"
import * as DateTime from "effect/DateTime"
import { OrganizationId } from "@herald/core/kernel/Ids"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { Browser, BrowserContext, Page } from "playwright-core"
import * as Axe from "../support/Axe.js"
import * as Browsers from "../support/Browser.js"
import * as HeraldServer from "../support/HeraldServer.js"

declare const document: {
  readonly documentElement: { readonly scrollWidth: number }
  readonly activeElement: { getAttribute(name: string): string | null } | null
}

/** Wall clocks around clock changes (gaps, repeated hours, a 30-minute change) and a zone without any. */
const wallClocks: ReadonlyArray<readonly [zone: string, date: string, hours: number, minutes: number]> = [
  ["America/New_York", "2027-03-14", 2, 30],
  ["America/New_York", "2027-03-14", 9, 0],
  ["America/New_York", "2026-11-01", 1, 30],
  ["America/New_York", "2026-11-01", 0, 59],
  ["Europe/Berlin", "2027-03-28", 2, 0],
  ["Europe/Berlin", "2026-10-25", 2, 30],
  ["Australia/Lord_Howe", "2026-10-04", 2, 15],
  ["Australia/Lord_Howe", "2027-04-04", 1, 45],
  ["Asia/Kolkata", "2027-03-28", 9, 0],
  ["Pacific/Apia", "2026-12-31", 12, 0]
]

const eventually = { timeout: 15_000 }
const timezoneId = "Europe/Berlin"

const skip = Browsers.skipReason
if (skip !== undefined) console.warn(`[skip] dashboard calendar browser tests: ${skip}`)

interface Post {
  readonly id: string
  readonly scheduled_for: string | null
}

const berlin = (iso: string, part: Intl.DateTimeFormatOptions) =>
  new Intl.DateTimeFormat("en-CA", { timeZone: timezoneId, hourCycle: "h23", ...part }).format(new Date(iso))
const berlinDay = (iso: string) => berlin(iso, { year: "numeric", month: "2-digit", day: "2-digit" })
const berlinHour = (iso: string) => Number(berlin(iso, { hour: "2-digit" }))
const berlinMinutes = (iso: string) => berlin(iso, { minute: "2-digit" }).padStart(2, "0")
const nextDay = (day: string, n = 1) =>
  new Date(Date.parse(`${day}T12:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10)

/** The Monday (in Berlin) of the week `weeks` from now. */
const mondayAhead = (weeks: number): string => {
  const day = (d: Date, part: Intl.DateTimeFormatOptions) =>
    new Intl.DateTimeFormat("en-CA", { timeZone: timezoneId, ...part }).format(d)
  let d = new Date(Date.now() + weeks * 7 * 86_400_000)
  while (day(d, { weekday: "short" }) !== "Mon") d = new Date(d.getTime() - 86_400_000)
  return day(d, { year: "numeric", month: "2-digit", day: "2-digit" })
}

describe.skipIf(skip !== undefined)("the week by hour (Chromium)", () => {
  let server: HeraldServer.HeraldServer
  let browser: Browser
  let context: BrowserContext
  let telegram = 0

  const api = async <T>(method: string, path: string, body?: unknown): Promise<{ status: number; data: T }> => {
    const res = await server.request(method, `/api/v1${path}`, body === undefined ? {} : { body })
    return { status: res.status, data: (res.json as { data: T }).data }
  }
  const getPost = async (id: string) => (await api<Post>("GET", `/posts/${id}`)).data
  const createPost = async (body: Record<string, unknown>) => {
    const res = await api<Post>("POST", "/posts", body)
    expect(res.status, JSON.stringify(res.data)).toBe(201)
    return res.data
  }

  beforeAll(async () => {
    ;[server, browser] = await Promise.all([HeraldServer.start({ args: ["--sandbox"] }), Browsers.launch()])
    const password = "correct horse battery staple hours"
    const email = await Browsers.setOwnerPassword(server, password)
    context = await browser.newContext({
      baseURL: server.baseUrl,
      timezoneId,
      locale: "en-GB",
      viewport: { width: 1280, height: 900 }
    })
    await Browsers.signInto(context, server, { email, password })
    const accounts = (await api<{ accounts: ReadonlyArray<{ id: number; platform: string }> }>("GET", "/accounts"))
      .data.accounts
    telegram = accounts.find((a) => a.platform === "telegram")!.id
  }, 120_000)

  afterAll(async () => {
    await context?.close()
    await Promise.all([browser?.close(), server?.stop()])
  })

  const open = async (path: string): Promise<{ page: Page; errors: Array<string> }> => {
    const page = await context.newPage()
    const errors = Browsers.watchErrors(page)
    await page.goto(path)
    await page.locator("main h1", { hasText: "Week by hour" }).waitFor(eventually)
    await page.locator("table.hours").waitFor(eventually)
    return { page, errors }
  }
  const cell = (page: Page, day: string, hour: number) => page.locator(`td[data-day="${day}"][data-hour="${hour}"]`)

  it(
    "a post sits in its hour in the viewer's zone; dragged to another day and hour it moves there, and Undo moves it back",
    async () => {
      const monday = mondayAhead(2)
      const at = new Date(`${nextDay(monday, 2)}T10:20:00Z`).toISOString()
      const post = await createPost({ content: "Hour grid tasting", account_ids: [telegram], scheduled_for: at })
      const { page, errors } = await open(`/calendar?view=hours&week=${monday}`)
      const from = cell(page, berlinDay(at), berlinHour(at))
      // 10:20 UTC is 11:20 in Berlin in winter: the post sits in the 11:00 row, not the 10:00 one.
      expect(berlinHour(at)).toBe(11)
      expect(await from.locator(`li.entry[data-post="${post.id}"]`).count()).toBe(1)
      expect(await page.locator(`li.entry[data-post="${post.id}"]`).count()).toBe(1)
      // Its platform shows as a badge named for screen readers.
      const badge = page.locator(`li.entry[data-post="${post.id}"] .platforms [role=img]`)
      expect(await badge.getAttribute("aria-label")).toBe("Telegram")
      expect(await badge.textContent()).toBe("TG")
      await Browsers.screenshot(page, "calendar-hours")

      const friday = nextDay(monday, 4)
      await page.locator(`li.entry[data-post="${post.id}"]`).dragTo(cell(page, friday, 16))
      await expect.poll(async () => (await getPost(post.id)).scheduled_for, eventually).not.toBe(at)
      const moved = (await getPost(post.id)).scheduled_for!
      expect([berlinDay(moved), berlinHour(moved), berlinMinutes(moved)]).toEqual([friday, 16, "20"])
      await expect.poll(() => cell(page, friday, 16).locator(`li.entry[data-post="${post.id}"]`).count(), eventually)
        .toBe(1)
      expect(await page.locator("#calendar-status").textContent()).toContain("Moved “Hour grid tasting”")
      await page.getByRole("button", { name: "Undo" }).click()
      await expect.poll(async () => (await getPost(post.id)).scheduled_for, eventually).toBe(at)
      await expect.poll(() => from.locator(`li.entry[data-post="${post.id}"]`).count(), eventually).toBe(1)
      expect(errors).toEqual([])
      await page.close()
    },
    60_000
  )

  it("an empty hour opens the composer for that hour, and the grid scrolls inside its frame at 375 px", async () => {
    const monday = mondayAhead(2)
    const thursday = nextDay(monday, 3)
    const { page, errors } = await open(`/calendar?view=hours&week=${monday}`)
    expect(await cell(page, thursday, 13).locator("li").count()).toBe(0)
    // The empty hours are one tab stop; the arrow keys move between them.
    expect(await page.locator("a.slot-new[tabindex='0']").count()).toBe(1)
    expect(await page.locator("a.slot-new").count()).toBeGreaterThan(100)
    await cell(page, thursday, 13).getByRole("link").focus()
    await page.keyboard.press("ArrowDown")
    const focused = () => page.evaluate(() => document.activeElement?.getAttribute("aria-label") ?? "")
    expect(await focused()).toMatch(/, 14:00$/)
    await page.keyboard.press("ArrowRight")
    expect(await focused()).toBe(
      await cell(page, nextDay(thursday, 1), 14).getByRole("link").getAttribute("aria-label")
    )
    expect(await page.locator("a.slot-new[tabindex='0']").count()).toBe(1)
    await cell(page, thursday, 13).getByRole("link", { name: /^Compose a post for .*, 13:00$/ }).click()
    await page.locator("main h1", { hasText: "Compose" }).waitFor(eventually)
    expect(await page.getByLabel(/^Schedule for/).inputValue()).toMatch(new RegExp(`^${thursday}T13:00(:00)?$`))
    await page.goto(`/calendar?view=hours&week=${monday}`)
    await page.locator("table.hours").waitFor(eventually)
    await page.setViewportSize({ width: 375, height: 800 })
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375)
    await Browsers.screenshot(page, "375px-calendar-hours")
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)

  it(
    "resolves a queue's wall clock to the instant the server's rule does, through gaps and repeated hours",
    async () => {
      const page = await context.newPage()
      await page.goto("/sign-in")
      await page.locator("main h1").waitFor(eventually)
      // A string, so that the test runner does not rewrite the page's dynamic import as its own.
      const inBrowser = await page.evaluate<ReadonlyArray<number>>(`(async () => {
      const { zonedInstant } = await import("/dashboard/assets/pages/queue-slots.js")
      return ${JSON.stringify(wallClocks)}.map(([zone, date, h, min]) => {
        const [y, m, d] = date.split("-").map(Number)
        return zonedInstant(zone, y, m, d, h, min)
      })
    })()`)
      const onServer = wallClocks.map(([zone, date, h, min]) => {
        const [year, month, day] = date.split("-").map(Number) as [number, number, number]
        const resolved = QueuePolicy.resolveWallClock(DateTime.zoneUnsafeMakeNamed(zone), { year, month, day }, h, min)
        return DateTime.toEpochMillis(resolved.at)
      })
      expect(inBrowser.map((ms) => new Date(ms).toISOString())).toEqual(
        onServer.map((ms) => new Date(ms).toISOString())
      )
      await page.close()
    },
    30_000
  )

  it(
    "draws the queue's openings (New York) as free slots at Berlin's hours, through New York's clock change",
    async () => {
      // 8 to 14 March 2027: New York moves its clocks forward on Sunday the 14th at 02:00, Berlin not
      // until the 28th. 09:00 in New York is 15:00 in Berlin until Saturday, 14:00 on the Sunday; 02:30
      // on the Sunday does not happen in New York and lands at 03:30 there, 08:30 in Berlin.
      await server.withStore(QueuesUseCase.setQueue({
        organizationId: OrganizationId.make(server.orgId),
        timezone: "America/New_York",
        openings: "daily 09:00; sun 02:30"
      }))
      // A post on Tuesday's opening holds it: that opening is not free.
      const held = await createPost({
        content: "On the queue's Tuesday opening",
        account_ids: [telegram],
        scheduled_for: "2027-03-09T14:00:00.000Z"
      })
      const { page, errors } = await open("/calendar?view=hours&week=2027-03-08")
      const free = page.locator(".free-slot")
      const slots = await free.evaluateAll((els) =>
        els.map((el) => el.closest("td")!.getAttribute("data-day") + " " + el.closest("td")!.getAttribute("data-hour"))
      )
      expect([...slots].sort()).toEqual([
        "2027-03-08 15",
        "2027-03-10 15",
        "2027-03-11 15",
        "2027-03-12 15",
        "2027-03-13 15",
        "2027-03-14 14",
        "2027-03-14 8"
      ])
      expect(await cell(page, "2027-03-09", 15).locator(`li.entry[data-post="${held.id}"]`).count()).toBe(1)
      expect(await cell(page, "2027-03-14", 8).locator(".free-slot").textContent()).toBe(
        "08:30 Free queue slot (03:30 America/New_York)"
      )
      expect(await cell(page, "2027-03-14", 14).locator(".free-slot time").getAttribute("datetime")).toBe(
        "2027-03-14T13:00:00.000Z"
      )
      await Axe.check(page, "the week by hour with free slots")
      await Browsers.screenshot(page, "calendar-hours-queue")
      // A free slot's cell composes for the opening's instant.
      await cell(page, "2027-03-14", 14).getByRole("link", { name: /^Compose a post for/ }).click()
      await page.locator("main h1", { hasText: "Compose" }).waitFor(eventually)
      expect(await page.getByLabel(/^Schedule for/).inputValue()).toMatch(/^2027-03-14T14:00(:00)?$/)
      expect(errors).toEqual([])
      await page.close()
    },
    60_000
  )
})
