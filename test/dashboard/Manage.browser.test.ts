/**
 * Managing the organization's publishing in Debian's Chromium against `herald serve --sandbox`: the
 * queue's zone and weekly openings edited, campaigns created, renamed, recoloured and archived, the
 * posts list searched and filtered (text, status, platform, account, campaign, dates) with the filters in
 * its URL; the composer's work in progress kept through a session that ends (and dropped once saved),
 * with a counter in each platform's own text. One server, one browser and one signed-in context for the file
 * (the owner signs in over HTTP once); each test opens its own tab, in Europe/Berlin. Screenshots go
 * to test-artifacts/dashboard/.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { Browser, BrowserContext, Page } from "playwright-core"
import * as Browsers from "../support/Browser.js"
import * as HeraldServer from "../support/HeraldServer.js"

declare const document: {
  readonly documentElement: { readonly scrollWidth: number }
  readonly activeElement: { readonly getAttribute: (name: string) => string | null } | null
}

const eventually = { timeout: 15_000 }
const timezoneId = "Europe/Berlin"

const skip = Browsers.skipReason
if (skip !== undefined) console.warn(`[skip] dashboard management browser tests: ${skip}`)

/** The viewer's calendar day of an instant, as a date input takes it. */
const localDay = (date: Date): string =>
  new Intl.DateTimeFormat("en-CA", { timeZone: timezoneId, year: "numeric", month: "2-digit", day: "2-digit" }).format(
    date
  )

const daysAhead = (days: number) => new Date(Math.floor((Date.now() + days * 86_400_000) / 1000) * 1000)

interface QueueView {
  readonly configured: boolean
  readonly timezone: string | null
  readonly openings: ReadonlyArray<{ readonly weekday_number: number; readonly time: string }>
  readonly forecast: ReadonlyArray<{ readonly scheduled_for: string }>
}
interface Campaign {
  readonly id: number
  readonly name: string
  readonly color: string | null
  readonly status: string
}
interface Post {
  readonly id: string
  readonly content: string
}

describe.skipIf(skip !== undefined)("managing queue, campaigns and posts in the dashboard (Chromium)", () => {
  let server: HeraldServer.HeraldServer
  let browser: Browser
  let context: BrowserContext
  let email = ""
  const password = "correct horse battery staple 35"
  const accounts: Record<string, number> = {}

  const api = async <T>(
    method: string,
    path: string,
    body?: unknown
  ): Promise<{ status: number; data: T; error: { code: string } | null }> => {
    const res = await server.request(method, `/api/v1${path}`, body === undefined ? {} : { body })
    const json = res.json as { data: T; error: { code: string } | null }
    return { status: res.status, data: json.data, error: json.error }
  }
  const createPost = async (body: Record<string, unknown>) => {
    const res = await api<Post>("POST", "/posts", body)
    expect(res.status, JSON.stringify(res.error)).toBe(201)
    return res.data
  }
  const campaignNamed = async (name: string) =>
    (await api<{ campaigns: ReadonlyArray<Campaign> }>("GET", "/campaigns?limit=100")).data.campaigns.find((c) =>
      c.name === name
    )

  beforeAll(async () => {
    ;[server, browser] = await Promise.all([
      HeraldServer.start({
        args: ["--sandbox"],
        env: {
          HERALD_RATE_LIMIT_PER_MINUTE: "100000",
          HERALD_RATE_LIMIT_PER_HOUR: "100000",
          HERALD_SIGN_IN_LIMIT_PER_MINUTE: "1000"
        }
      }),
      Browsers.launch()
    ])
    email = await Browsers.setOwnerPassword(server, password)
    context = await browser.newContext({
      baseURL: server.baseUrl,
      timezoneId,
      locale: "en-GB",
      viewport: { width: 1100, height: 900 }
    })
    await Browsers.signInto(context, server, { email, password })
    for (
      const a of (await api<{ accounts: ReadonlyArray<{ id: number; platform: string }> }>("GET", "/accounts")).data
        .accounts
    ) {
      accounts[a.platform] = a.id
    }
  }, 120_000)

  afterAll(async () => {
    await context?.close()
    await Promise.all([browser?.close(), server?.stop()])
  })

  /** A new tab of the signed-in context on `path`, once its page has rendered. */
  const open = async (path: string, heading?: string): Promise<{ page: Page; errors: Array<string> }> => {
    const page = await context.newPage()
    const errors = Browsers.watchErrors(page)
    await page.goto(path)
    await page.locator("main h1", heading === undefined ? {} : { hasText: heading }).waitFor(eventually)
    return { page, errors }
  }

  const noSidewaysScrolling = async (page: Page, name: string) => {
    await page.setViewportSize({ width: 375, height: 800 })
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375)
    await Browsers.screenshot(page, name)
  }

  it(
    "edits the queue's zone and weekly openings, by keyboard too; a zone that is not one is refused under its field",
    async () => {
      const { page, errors } = await open("/queue", "Queue")
      expect(await page.getByText("This organization has no queue yet").count()).toBe(1)
      await page.getByLabel("Time zone of the openings").fill("America/New_York")
      await page.getByRole("button", { name: "Add opening" }).click()
      // The new opening has focus; the keyboard sets its day and time.
      expect(await page.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toBe("Day of opening 1")
      await page.keyboard.press("End") // Sunday
      await page.keyboard.press("Tab")
      await page.keyboard.type("0915")
      await page.getByRole("button", { name: "Add opening" }).click()
      await page.getByLabel("Day of opening 2").selectOption({ label: "Wednesday" })
      await page.getByLabel("Time of opening 2").fill("14:30")
      await page.getByRole("button", { name: "Add opening" }).click()
      await page.getByLabel("Day of opening 3").selectOption({ label: "Monday" })
      await page.getByLabel("Time of opening 3").fill("08:00")
      const put = page.waitForRequest((r) => r.method() === "PUT")
      await page.getByRole("button", { name: "Save queue" }).click()
      expect((await put).postDataJSON()).toEqual({
        timezone: "America/New_York",
        openings: [{ weekday_number: 7, time: "09:15" }, { weekday_number: 3, time: "14:30" }, {
          weekday_number: 1,
          time: "08:00"
        }]
      })
      await expect.poll(() => page.locator("#flash").textContent(), eventually).toBe("Queue saved.")
      const saved = (await api<QueueView>("GET", "/queue")).data
      expect(saved).toMatchObject({
        configured: true,
        timezone: "America/New_York",
        openings: [{ weekday_number: 1, time: "08:00" }, { weekday_number: 3, time: "14:30" }, {
          weekday_number: 7,
          time: "09:15"
        }]
      })
      // The forecast shows where the next queued posts land, each at its instant.
      await expect.poll(() => page.locator("#forecast li time").first().getAttribute("datetime"), eventually)
        .toBe(new Date(saved.forecast[0]!.scheduled_for).toISOString())
      expect(await page.locator("#forecast li").count()).toBe(10)
      // The openings are shown again in week order.
      expect(await page.getByLabel("Day of opening 1").inputValue()).toBe("1")
      expect(await page.getByLabel("Time of opening 3").inputValue()).toBe("09:15")

      await page.getByRole("button", { name: "Remove opening 3" }).click()
      // Focus stays in the list, on the opening now last.
      expect(await page.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toBe("Day of opening 2")
      await page.getByLabel("Time zone of the openings").fill("Mars/Base")
      await page.getByRole("button", { name: "Save queue" }).click()
      await expect.poll(() => page.locator("[data-field=timezone] .field-error").textContent(), eventually).toContain(
        "Mars/Base"
      )
      expect(await page.getByLabel("Time zone of the openings").getAttribute("aria-invalid")).toBe("true")
      expect((await api<QueueView>("GET", "/queue")).data.openings).toEqual(saved.openings)
      await page.getByLabel("Time zone of the openings").fill("America/New_York")
      await page.getByRole("button", { name: "Save queue" }).click()
      await expect.poll(async () => (await api<QueueView>("GET", "/queue")).data.openings.length, eventually).toBe(2)
      await Browsers.screenshot(page, "queue")
      await noSidewaysScrolling(page, "375px-queue")
      expect(errors).toEqual([])
      await page.close()
    },
    60_000
  )

  it("creates, renames, recolours and archives a campaign; the posts list filters by campaign", async () => {
    const { page, errors } = await open("/campaigns", "Campaigns")
    await page.getByLabel("Name", { exact: true }).fill("Spring launch")
    await page.getByLabel("Colour", { exact: true }).fill("#ff8800")
    await page.getByRole("button", { name: "Create campaign" }).click()
    await expect.poll(() => page.locator("#flash").textContent(), eventually).toBe("Created Spring launch.")
    const made = (await campaignNamed("Spring launch"))!
    expect(made).toMatchObject({ color: "#ff8800", status: "active" })
    expect(await page.getByLabel("Name", { exact: true }).inputValue()).toBe("")

    const row = page.locator(`tr[data-campaign="${made.id}"]`)
    await row.getByLabel("Name of Spring launch").fill("Spring launch 2027")
    await row.getByLabel("Colour of Spring launch").fill("#00aa55")
    await row.getByRole("button", { name: "Save" }).click()
    await expect.poll(() => page.locator("#flash").textContent(), eventually).toBe("Saved Spring launch 2027.")
    expect(await campaignNamed("Spring launch 2027")).toMatchObject({ id: made.id, color: "#00aa55", status: "active" })
    // A blank name is refused under the name, and nothing changes.
    await row.getByLabel("Name of Spring launch 2027").fill("  ")
    await row.getByRole("button", { name: "Save" }).click()
    await expect.poll(() => row.locator("[data-field=name] .field-error").count(), eventually).toBe(1)
    expect(await campaignNamed("Spring launch 2027")).toMatchObject({ id: made.id })

    await page.reload()
    await row.getByRole("button", { name: "Archive" }).click()
    await expect.poll(() => page.locator("#flash").textContent(), eventually).toBe("Archived Spring launch 2027.")
    expect((await campaignNamed("Spring launch 2027"))!.status).toBe("archived")
    await row.getByRole("button", { name: "Restore" }).waitFor(eventually)
    await Browsers.screenshot(page, "campaigns")
    await noSidewaysScrolling(page, "375px-campaigns")

    // The posts list, filtered by the campaign, shows its posts only.
    const inside = await createPost({
      content: "Spring launch teaser",
      account_ids: [accounts["x"]],
      draft: true,
      campaign_id: made.id
    })
    await createPost({ content: "Unrelated note", account_ids: [accounts["x"]], draft: true })
    await page.setViewportSize({ width: 1100, height: 900 })
    await page.goto("/posts")
    await page.locator("main h1", { hasText: "Posts" }).waitFor(eventually)
    // An archived campaign still filters; the list says it is archived.
    await page.getByLabel("Campaign").selectOption({ label: "Spring launch 2027 (archived)" })
    await page.getByRole("button", { name: "Apply" }).click()
    await page.waitForURL((url) => url.searchParams.get("campaign_id") === String(made.id))
    await expect.poll(() => page.locator("tbody tr").count(), eventually).toBe(1)
    expect(await page.locator("tbody tr a").getAttribute("href")).toBe(`/posts/${inside.id}`)

    // The calendar, filtered by the campaign, shows its scheduled posts only, in every view it links to.
    const when = new Date(Date.now() + 2 * 86_400_000)
    when.setUTCHours(12, 0, 0, 0)
    const planned = await createPost({
      content: "Spring launch day",
      account_ids: [accounts["x"]],
      scheduled_for: when.toISOString(),
      campaign_id: made.id
    })
    const other = await createPost({
      content: "Not in the campaign",
      account_ids: [accounts["x"]],
      scheduled_for: when.toISOString()
    })
    await page.goto(`/calendar?week=${localDay(when)}`)
    await page.locator("main h1", { hasText: "Week calendar" }).waitFor(eventually)
    await expect.poll(() => page.locator(`li.entry[data-post="${other.id}"]`).count(), eventually).toBe(1)
    await page.getByLabel("Campaign").selectOption({ label: "Spring launch 2027 (archived)" })
    await page.waitForURL((url) => url.searchParams.get("campaign_id") === String(made.id))
    await expect.poll(() => page.locator(`li.entry[data-post="${planned.id}"]`).count(), eventually).toBe(1)
    expect(await page.locator(`li.entry[data-post="${other.id}"]`).count()).toBe(0)
    await page.getByRole("link", { name: "Week by hour" }).click()
    await page.locator("main h1", { hasText: "Week by hour" }).waitFor(eventually)
    expect(new URL(page.url()).searchParams.get("campaign_id")).toBe(String(made.id))
    await expect.poll(() => page.locator(`li.entry[data-post="${planned.id}"]`).count(), eventually).toBe(1)
    expect(await page.locator(`li.entry[data-post="${other.id}"]`).count()).toBe(0)
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)
  it("searches and filters the posts list; the filters live in the URL, so a reload keeps them", async () => {
    const soon = daysAhead(3)
    const later = daysAhead(10)
    const festival = await createPost({
      content: "Larch festival on the green",
      account_ids: [accounts["x"]],
      scheduled_for: soon.toISOString()
    })
    const sale = await createPost({ content: "Larch timber sale", account_ids: [accounts["telegram"]], draft: true })
    const walk = await createPost({
      content: "Guided larch walk",
      account_ids: [accounts["x"], accounts["bluesky"]],
      scheduled_for: later.toISOString()
    })
    await createPost({ content: "Oak planting day", account_ids: [accounts["x"]], scheduled_for: soon.toISOString() })
    const { page, errors } = await open("/posts", "Posts")
    const listed = async () =>
      (await page.locator("main tbody tr a").evaluateAll((links) => links.map((a) => a.getAttribute("href")))).sort()
    const ids = (...posts: ReadonlyArray<Post>) => posts.map((p) => `/posts/${p.id}`).sort()
    const apply = async (check: (url: URL) => boolean) => {
      await page.getByRole("button", { name: "Apply" }).click()
      await page.waitForURL(check)
      await page.locator("main h1", { hasText: "Posts" }).waitFor(eventually)
    }

    // Text: case-insensitive, any part of the text.
    await page.getByLabel("Text contains").fill("LARCH")
    const search = page.waitForRequest((r) => r.url().includes("/api/v1/posts?") && r.url().includes("search="))
    await page.getByLabel("Text contains").press("Enter")
    expect(new URL((await search).url()).searchParams.get("search")).toBe("LARCH")
    await page.waitForURL((url) => url.search === "?search=LARCH")
    await expect.poll(listed, eventually).toEqual(ids(festival, sale, walk))
    expect(await page.locator("main caption").textContent()).toBe("3 posts match")

    // Platform and status.
    await page.getByLabel("Platform").selectOption({ label: "X" })
    await page.getByLabel("Status").selectOption("scheduled")
    await apply((url) => url.searchParams.get("platform") === "x" && url.searchParams.get("status") === "scheduled")
    await expect.poll(listed, eventually).toEqual(ids(festival, walk))
    // A reload keeps every filter, in the form and in the list.
    await page.reload()
    await page.locator("main h1", { hasText: "Posts" }).waitFor(eventually)
    expect(await page.getByLabel("Text contains").inputValue()).toBe("LARCH")
    expect(await page.getByLabel("Platform").inputValue()).toBe("x")
    expect(await page.getByLabel("Status").inputValue()).toBe("scheduled")
    await expect.poll(listed, eventually).toEqual(ids(festival, walk))

    // Dates: the day of the later post, in the viewer's zone.
    await page.getByLabel("Dates").selectOption({ label: "Scheduled" })
    await page.getByLabel("From (your zone)").fill(localDay(later))
    await page.getByLabel("To (your zone)").fill(localDay(later))
    const ranged = page.waitForRequest((r) =>
      r.url().includes("/api/v1/posts?") && r.url().includes("scheduled_after=")
    )
    await apply((url) => url.searchParams.get("from") === localDay(later))
    const asked = new URL((await ranged).url()).searchParams
    expect(Date.parse(asked.get("scheduled_after")!)).toBeLessThanOrEqual(later.getTime())
    expect(Date.parse(asked.get("scheduled_before")!)).toBeGreaterThan(later.getTime())
    expect(Date.parse(asked.get("scheduled_before")!) - Date.parse(asked.get("scheduled_after")!)).toBeLessThanOrEqual(
      25 * 3_600_000
    )
    await expect.poll(listed, eventually).toEqual(ids(walk))

    // Account: the Telegram account's larch posts (the draft only).
    await page.goto("/posts?search=larch")
    await page.locator("main h1", { hasText: "Posts" }).waitFor(eventually)
    await page.getByLabel("Account").selectOption({ label: "Sandbox telegram (telegram)" })
    await apply((url) => url.searchParams.get("account_id") === String(accounts["telegram"]))
    await expect.poll(listed, eventually).toEqual(ids(sale))
    // Nothing matching says so.
    await page.getByLabel("Status").selectOption("published")
    await apply((url) => url.searchParams.get("status") === "published")
    await page.getByText("No posts match these filters.").waitFor(eventually)
    await Browsers.screenshot(page, "posts-filtered")
    await noSidewaysScrolling(page, "375px-posts-filtered")
    // Clear drops every filter.
    await page.getByRole("link", { name: "Clear" }).click()
    await page.waitForURL((url) => url.pathname === "/posts" && url.search === "")
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)

  it(
    "keeps the composer's work through a session that ends, restores it after signing in again, and drops it once saved",
    async () => {
      // A context of its own: its session is ended here, the file's shared one is not.
      const own = await browser.newContext({
        baseURL: server.baseUrl,
        timezoneId,
        locale: "en-GB",
        viewport: { width: 375, height: 800 }
      })
      const { cookie, csrf } = await Browsers.signInto(own, server, { email, password })
      const page = await own.newPage()
      const errors = Browsers.watchErrors(page)
      await page.goto("/compose")
      await page.locator("main h1", { hasText: "Compose" }).waitFor(eventually)
      await page.getByLabel("Sandbox x (x)").check()
      await page.getByLabel("Sandbox bluesky (bluesky)").check()
      await page.getByLabel("Text", { exact: true }).fill("Cedar workshop on Saturday")
      // Each platform's own text has its own counter, counting the main text while it is empty.
      const xCounter = page.locator("[data-counter=x]")
      await page.locator("details[data-platform=x] summary").click()
      await expect.poll(() => xCounter.textContent(), eventually).toBe("26 / 280 (the main text)")
      await page.getByLabel("Text for x (empty: the main text)").fill("Cedar workshop, Saturday 10:00 🌲")
      await expect.poll(() => xCounter.textContent(), eventually).toBe("33 / 280")
      expect(await page.getByLabel("Text for x (empty: the main text)").getAttribute("aria-describedby")).toBe(
        "counter-x"
      )
      await page.getByLabel("Text for x (empty: the main text)").fill("x".repeat(281))
      await expect.poll(() => xCounter.textContent(), eventually).toBe("281 / 280: too long")
      expect(await xCounter.getAttribute("class")).toContain("over")
      await page.getByLabel("Text for x (empty: the main text)").fill("Cedar workshop, Saturday 10:00")
      await expect.poll(() => xCounter.textContent(), eventually).toBe("30 / 280")
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375)
      await Browsers.screenshot(page, "375px-compose-override-counter")

      // The session ends (signed out elsewhere); the next page asks to sign in again.
      const ended = await server.request("DELETE", "/dashboard/api/session", {
        key: null,
        headers: { cookie: `herald_session=${cookie}`, "x-csrf-token": csrf }
      })
      expect(ended.status, ended.text).toBeLessThan(300)
      await page.reload()
      await page.waitForURL((url) => url.pathname === "/sign-in")
      await page.getByLabel("Email").fill(email)
      await page.getByLabel("Password").fill(password)
      await page.getByRole("button", { name: "Sign in" }).click()
      await page.waitForURL((url) => url.pathname === "/compose")
      await page.locator("#restored").waitFor(eventually)
      expect(await page.locator("#restored").textContent()).toContain("Restored your unsaved work from")
      expect(await page.getByLabel("Text", { exact: true }).inputValue()).toBe("Cedar workshop on Saturday")
      expect(await page.getByLabel("Sandbox x (x)").isChecked()).toBe(true)
      expect(await page.getByLabel("Sandbox bluesky (bluesky)").isChecked()).toBe(true)
      expect(await page.getByLabel("Text for x (empty: the main text)").inputValue()).toBe(
        "Cedar workshop, Saturday 10:00"
      )
      await expect.poll(() => xCounter.textContent(), eventually).toBe("30 / 280")
      await Browsers.screenshot(page, "375px-compose-restored")
      // Opened for a time (a calendar day's "+ Compose"), the kept work comes back with the time asked for.
      const asked = new Date(Date.UTC(2031, 0, 15, 8, 0, 0))
      await page.goto(`/compose?at=${asked.toISOString()}`)
      await page.locator("#restored").waitFor(eventually)
      expect(await page.getByLabel(/^Schedule for/).inputValue()).toMatch(/^2031-01-15T09:00(:00)?$/)
      expect(await page.getByLabel("Text", { exact: true }).inputValue()).toBe("Cedar workshop on Saturday")

      // Saved: the kept copy is dropped, and the composer opens empty.
      await page.getByRole("button", { name: "Save draft" }).click()
      await page.waitForURL((url) => /^\/posts\/[0-9a-f-]{36}$/.test(url.pathname))
      const saved = (await api<Post & { platform_content: Record<string, { content: string }> }>(
        "GET",
        `/posts/${page.url().split("/").pop()}`
      )).data
      expect(saved.content).toBe("Cedar workshop on Saturday")
      expect(saved.platform_content["x"]?.content).toBe("Cedar workshop, Saturday 10:00")
      await page.goto("/compose")
      await page.locator("main h1", { hasText: "Compose" }).waitFor(eventually)
      expect(await page.locator("#restored").count()).toBe(0)
      expect(await page.getByLabel("Text", { exact: true }).inputValue()).toBe("")
      expect(errors).toEqual([])
      await own.close()
    },
    60_000
  )
})
