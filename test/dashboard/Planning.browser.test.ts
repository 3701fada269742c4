/**
 * The dashboard's daily loop in Debian's Chromium against `herald serve --sandbox`: every post is
 * editable (a scheduled post and a failed one in the composer, reschedule, duplicate, delete after a
 * confirmation), a draft is scheduled, queued or published from its page, and an approval is followed
 * by a publish in two clicks; the week calendar shows every post of a busy week (200) and the posts
 * published at once; a month view; a post dragged to another day is moved there, and Undo moves it back.
 * One server, one browser and one signed-in context for the file (the
 * owner signs in over HTTP once; the sign-in page itself is Dashboard.browser.test.ts's); each test
 * opens its own tab, in Europe/Berlin so that zone conversions show. Screenshots go to
 * test-artifacts/dashboard/.
 */
import * as QueuesUseCase from "@herald/core/workflow/Queues"
import { OrganizationId, UserId } from "@herald/core/kernel/Ids"
import * as Admin from "@herald/http/Admin"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { Browser, BrowserContext, Page } from "playwright-core"
import * as Browsers from "../support/Browser.js"
import * as HeraldServer from "../support/HeraldServer.js"

declare const document: {
  readonly documentElement: { readonly scrollWidth: number }
  readonly activeElement: {
    readonly id: string
    readonly tagName: string
    readonly getAttribute: (name: string) => string | null
  } | null
  readonly querySelector: (selector: string) => { click(): void } | null
}

const eventually = { timeout: 15_000 }
const timezoneId = "Europe/Berlin"

const skip = Browsers.skipReason
if (skip !== undefined) console.warn(`[skip] dashboard planning browser tests: ${skip}`)

interface Destination {
  readonly account_id: number
  readonly status: string
}
interface Post {
  readonly id: string
  readonly content: string
  readonly status: string
  readonly draft: boolean
  readonly scheduled_for: string | null
  readonly approval_status: string | null
  readonly destinations: ReadonlyArray<Destination>
}

/** The viewer's wall clock of an instant, as a datetime-local input takes it. */
const localInput = (date: Date): string => {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-CA", {
      timeZone: timezoneId,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      hourCycle: "h23"
    }).formatToParts(date).map((p) => [p.type, p.value])
  )
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}`
}

/** A whole second, `hours` from now. */
const hoursAhead = (hours: number) => new Date(Math.floor((Date.now() + hours * 3_600_000) / 1000) * 1000)

describe.skipIf(skip !== undefined)("planning in the dashboard (Chromium)", () => {
  let server: HeraldServer.HeraldServer
  let browser: Browser
  let context: BrowserContext
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
  const getPost = async (id: string) => (await api<Post>("GET", `/posts/${id}`)).data
  const createPost = async (body: Record<string, unknown>) => {
    const res = await api<Post>("POST", "/posts", body)
    expect(res.status, JSON.stringify(res.error)).toBe(201)
    return res.data
  }

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
    const password = "correct horse battery staple 35"
    const email = await Browsers.setOwnerPassword(server, password)
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

  it(
    "edits a scheduled post in the composer (only what changed is sent), then reschedules it from its page",
    async () => {
      const at = hoursAhead(48)
      const post = await createPost({
        content: "Spring menu tasting",
        account_ids: [accounts["x"], accounts["telegram"]],
        scheduled_for: at.toISOString(),
        timezone: timezoneId
      })
      const { page, errors } = await open(`/posts/${post.id}`, "Post")
      await page.getByRole("link", { name: "Edit", exact: true }).click()
      await page.locator("main h1", { hasText: "Edit post" }).waitFor(eventually)
      // The composer holds the post as it is: accounts, text and time.
      expect(await page.getByLabel("Sandbox x (x)").isChecked()).toBe(true)
      expect(await page.getByLabel("Sandbox telegram (telegram)").isChecked()).toBe(true)
      expect(await page.getByLabel("Text", { exact: true }).inputValue()).toBe("Spring menu tasting")
      expect(await page.getByLabel(/^Scheduled for/).inputValue()).toBe(localInput(at))
      const later = hoursAhead(50)
      await page.getByLabel("Text", { exact: true }).fill("Spring menu tasting, now with desserts")
      await page.getByLabel(/^Scheduled for/).fill(localInput(later))
      await Browsers.screenshot(page, "edit-post")
      const patch = page.waitForRequest((r) => r.method() === "PATCH")
      await page.getByRole("button", { name: "Save changes" }).click()
      expect((await patch).postDataJSON()).toEqual({
        content: "Spring menu tasting, now with desserts",
        scheduled_for: later.toISOString()
      })
      await page.waitForURL(`**/posts/${post.id}`)
      await expect.poll(() => page.locator("#flash").textContent(), eventually).toBe("Changes saved.")
      expect(await getPost(post.id)).toMatchObject({
        content: "Spring menu tasting, now with desserts",
        scheduled_for: later.toISOString(),
        status: "scheduled"
      })

      // Reschedule on the post's page.
      const again = hoursAhead(72)
      await page.getByLabel(/^New time/).fill(localInput(again))
      await page.getByRole("button", { name: "Reschedule" }).click()
      await expect.poll(() => page.locator("#flash").textContent(), eventually).toBe("Rescheduled.")
      expect((await getPost(post.id)).scheduled_for).toBe(again.toISOString())
      await expect.poll(() => page.locator("#post-scheduled time").getAttribute("datetime"), eventually).toBe(
        again.toISOString()
      )
      // A time in the past is refused under the time field, and nothing changes.
      await page.getByLabel(/^New time/).fill(localInput(hoursAhead(-2)))
      await page.getByRole("button", { name: "Reschedule" }).click()
      await expect.poll(() => page.locator("[data-field=scheduled_for] .field-error").count(), eventually).toBe(1)
      expect(await page.getByLabel(/^New time/).getAttribute("aria-invalid")).toBe("true")
      expect((await getPost(post.id)).scheduled_for).toBe(again.toISOString())
      await Browsers.screenshot(page, "post-scheduled")
      // At 375 px the post's controls wrap: no sideways scrolling.
      await page.setViewportSize({ width: 375, height: 800 })
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375)
      await Browsers.screenshot(page, "375px-post-scheduled")
      expect(errors).toEqual([])
      await page.close()
    },
    60_000
  )

  it("a failed post opens in the composer; its new text is what Retry publishes", async () => {
    const post = await createPost({ content: "Opening hours [sandbox:fail]", account_ids: [accounts["telegram"]] })
    await expect.poll(async () => (await getPost(post.id)).status, eventually).toBe("failed")
    const { page, errors } = await open(`/compose?post=${post.id}`, "Edit post")
    await page.getByLabel("Text", { exact: true }).fill("Opening hours: 9 to 5")
    await page.getByRole("button", { name: "Save changes" }).click()
    await page.waitForURL(`**/posts/${post.id}`)
    await page.locator("tbody tr").first().getByRole("button", { name: "Retry" }).click()
    await expect.poll(() => page.locator("#post-status").textContent(), { timeout: 30_000 }).toBe("published")
    expect(await getPost(post.id)).toMatchObject({ content: "Opening hours: 9 to 5", status: "published" })
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)

  it("duplicates a post into a new draft, and deletes a post only once the deletion is confirmed", async () => {
    const post = await createPost({
      content: "Weekly roundup",
      account_ids: [accounts["x"]],
      scheduled_for: hoursAhead(30).toISOString()
    })
    const { page, errors } = await open(`/posts/${post.id}`, "Post")
    await page.getByRole("link", { name: "Duplicate" }).click()
    await page.locator("main h1", { hasText: "Compose a copy" }).waitFor(eventually)
    expect(await page.getByLabel("Text", { exact: true }).inputValue()).toBe("Weekly roundup")
    expect(await page.getByLabel("Sandbox x (x)").isChecked()).toBe(true)
    await page.getByRole("button", { name: "Save draft" }).click()
    await page.waitForURL((url) => /\/posts\/[0-9a-f-]{36}$/.test(url.pathname) && !url.pathname.endsWith(post.id))
    const copy = await getPost(page.url().split("/").pop()!)
    expect(copy).toMatchObject({ content: "Weekly roundup", status: "draft" })

    // Delete: Cancel keeps the post; confirming removes it and lands on the list.
    await page.goto(`/posts/${post.id}`)
    await page.getByRole("button", { name: "Delete" }).click()
    const dialog = page.getByRole("dialog")
    await dialog.waitFor(eventually)
    expect(await dialog.textContent()).toContain("Delete this scheduled post")
    await Browsers.screenshot(page, "post-delete-confirm")
    await dialog.getByRole("button", { name: "Cancel" }).click()
    await dialog.waitFor({ state: "detached" })
    expect((await api("GET", `/posts/${post.id}`)).status).toBe(200)
    await page.getByRole("button", { name: "Delete" }).click()
    await page.getByRole("dialog").getByRole("button", { name: "Delete post" }).click()
    await page.waitForURL("**/posts")
    await expect.poll(() => page.locator("#flash").textContent(), eventually).toBe("Post deleted.")
    expect((await api("GET", `/posts/${post.id}`)).status).toBe(404)
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)

  it(
    "a draft is scheduled, queued or published from its page, and edited then scheduled from the composer",
    async () => {
      await server.withStore(
        QueuesUseCase.setQueue({
          organizationId: OrganizationId.make(server.orgId),
          timezone: "America/New_York",
          openings: "daily 09:00"
        })
      )
      const forecast = (await api<{ forecast: ReadonlyArray<{ scheduled_for: string }> }>("GET", "/queue?count=1")).data
        .forecast[0]!
      const draft = (content: string) => createPost({ content, account_ids: [accounts["telegram"]], draft: true })

      const toQueue = await draft("Queued draft")
      const { page, errors } = await open(`/posts/${toQueue.id}`, "Post")
      await Browsers.screenshot(page, "post-draft")
      await page.getByRole("button", { name: "Add to queue" }).click()
      await expect.poll(() => page.locator("#flash").textContent(), eventually).toBe("Added to the queue.")
      expect(await getPost(toQueue.id)).toMatchObject({ status: "scheduled", scheduled_for: forecast.scheduled_for })

      const toSchedule = await draft("Scheduled draft")
      await page.goto(`/posts/${toSchedule.id}`)
      const at = hoursAhead(5)
      await page.getByLabel(/^Time \(your zone/).fill(localInput(at))
      await page.getByRole("button", { name: "Schedule", exact: true }).click()
      await expect.poll(() => page.locator("#flash").textContent(), eventually).toBe("Scheduled.")
      expect(await getPost(toSchedule.id)).toMatchObject({ status: "scheduled", scheduled_for: at.toISOString() })

      const toPublish = await draft("Published draft")
      await page.goto(`/posts/${toPublish.id}`)
      await page.getByRole("button", { name: "Publish now" }).click()
      await expect.poll(() => page.locator("#post-status").textContent(), { timeout: 30_000 }).toBe("published")

      const edited = await draft("Draft before edit")
      await page.goto(`/compose?post=${edited.id}`)
      await page.locator("main h1", { hasText: "Edit draft" }).waitFor(eventually)
      await page.getByLabel("Text", { exact: true }).fill("Draft after edit")
      const when = hoursAhead(6)
      await page.getByLabel(/^Schedule for/).fill(localInput(when))
      await page.getByRole("button", { name: "Schedule", exact: true }).click()
      await page.waitForURL(`**/posts/${edited.id}`)
      expect(await getPost(edited.id)).toMatchObject({
        content: "Draft after edit",
        status: "scheduled",
        scheduled_for: when.toISOString()
      })
      expect(errors).toEqual([])
      await page.close()
    },
    90_000
  )

  it("approve, then publish: two clicks in the approvals inbox", async () => {
    const post = await createPost({
      content: "Needs a yes",
      account_ids: [accounts["telegram"]],
      draft: true,
      request_approval: true
    })
    const { page, errors } = await open("/approvals", "Approvals")
    const card = page.locator("article", { hasText: "Needs a yes" })
    await card.getByRole("button", { name: "Approve" }).click()
    // Focus waits on the next step.
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute("data-action")), eventually).toBe(
      "Publish now"
    )
    await Browsers.screenshot(page, "approvals-approved")
    await card.getByRole("button", { name: "Publish now" }).click()
    await page.waitForURL(`**/posts/${post.id}`)
    await expect.poll(() => page.locator("#post-status").textContent(), { timeout: 30_000 }).toBe("published")
    expect((await getPost(post.id)).approval_status).toBe("approved")
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)

  it(
    "Save draft then Publish now, clicked at once, make one post: every action button waits for the one in flight",
    async () => {
      const { page, errors } = await open("/compose", "Compose")
      const text = `Only once ${Date.now()}`
      await page.getByLabel("Sandbox telegram (telegram)").check()
      await page.getByLabel("Text", { exact: true }).fill(text)
      const creates: Array<string> = []
      page.on("request", (r) => {
        if (r.method() === "POST" && new URL(r.url()).pathname === "/api/v1/posts") creates.push(r.url())
      })
      // Both clicks in one task, before any answer: the second must find its button locked.
      await page.evaluate(() => {
        document.querySelector("[data-action='Save draft']")!.click()
        document.querySelector("[data-action='Publish now']")!.click()
      })
      await page.waitForURL(/\/posts\/[0-9a-f-]{36}$/)
      expect(creates).toHaveLength(1)
      const found = await api<{ posts: ReadonlyArray<Post> }>("GET", `/posts?search=${encodeURIComponent(text)}`)
      expect(found.data.posts.map((p) => p.status)).toEqual(["draft"])
      expect(errors).toEqual([])
      await page.close()
    },
    60_000
  )

  it(
    "refusals read in plain words under the field they concern, once: a text too long for X, a missing YouTube title",
    async () => {
      const { page, errors } = await open("/compose", "Compose")
      await page.getByLabel("Sandbox x (x)").check()
      await page.getByLabel("Text", { exact: true }).fill("a".repeat(281))
      await page.getByRole("button", { name: "Schedule", exact: true }).click()
      const under = (path: string) => page.locator(`[data-field="${path}"] .field-error`)
      await expect.poll(() => under("content").textContent(), eventually).toBe(
        "Too long for X: 281 characters (as X counts them), at most 280."
      )
      expect(await page.getByText("Too long for X").count()).toBe(1)
      expect(await page.getByLabel("Text", { exact: true }).getAttribute("aria-invalid")).toBe("true")
      // Focus goes to the field in error.
      expect(await page.evaluate(() => document.activeElement?.getAttribute("name"))).toBe("content")

      await page.getByLabel("Sandbox x (x)").uncheck()
      await page.getByLabel("Sandbox youtube (youtube)").check()
      await page.getByLabel("Text", { exact: true }).fill("Our new video")
      await page.getByRole("button", { name: "Schedule", exact: true }).click()
      // The title is folded away under YouTube's settings: they open to show it.
      await expect.poll(() => under("platform_content.youtube.settings.title").textContent(), eventually)
        .toMatch(/^YouTube needs the title/)
      expect(await under("platform_content.youtube.settings.title").isVisible()).toBe(true)
      expect(await under("content").count()).toBe(0)
      // The field's hint names the API's key; the refusal itself does not.
      const said = (await page.locator("main .field-error, main .notice").allTextContents()).join(" ")
      for (const word of ["settings.", "platform_content", "validation_error", "content_too_long"]) {
        expect(said).not.toContain(word)
      }
      await Browsers.screenshot(page, "compose-errors")
      expect(
        await api("GET", `/posts?search=${encodeURIComponent("Our new video")}`).then((r) =>
          (r.data as { posts: Array<unknown> }).posts
        )
      ).toEqual([])
      expect(errors).toEqual([])
      await page.close()
    },
    60_000
  )

  it(
    "a refused credential connect keeps what was typed; the sandbox organization's plan has room to connect",
    async () => {
      const me = (await api<{ organization: { plan: string }; usage: { accounts: { used: number; limit: number } } }>(
        "GET",
        "/me"
      )).data
      expect(me.usage.accounts.used).toBe(11)
      expect(me.usage.accounts.limit).toBeGreaterThan(11)
      const { page, errors } = await open("/accounts", "Accounts")
      await page.getByLabel("Platform").selectOption("telegram")
      await page.getByLabel("Bot token").fill("123456:sandbox-token")
      await page.getByLabel("Channel (username or numeric chat id)").fill("   ")
      await page.getByRole("button", { name: "Connect telegram" }).click()
      const channel = page.locator("[data-field=channel]")
      await expect.poll(() => channel.locator(".field-error").textContent(), eventually).toBe("Enter the channel.")
      expect(await page.getByText("Enter the channel.").count()).toBe(1)
      expect(await page.getByLabel("Bot token").inputValue()).toBe("123456:sandbox-token")
      await Browsers.screenshot(page, "accounts-connect-refused")
      await page.getByLabel("Channel (username or numeric chat id)").fill("@herald_news")
      await page.getByRole("button", { name: "Connect telegram" }).click()
      await expect.poll(() => page.locator("#flash").textContent(), eventually).toBe("Connected telegram.")
      expect((await api<{ accounts: ReadonlyArray<unknown> }>("GET", "/accounts")).data.accounts).toHaveLength(12)
      expect(errors).toEqual([])
      await page.close()
    },
    60_000
  )

  it(
    "a post due 09:00 in New York reads, for a viewer in Berlin, as Berlin time labelled Europe/Berlin, and 09:00 labelled America/New_York",
    async () => {
      // 09:00 in New York three days ahead: 14:00 UTC in winter, 13:00 UTC in summer.
      const day = new Date(Date.now() + 3 * 86_400_000)
      const nine = [14, 13].map((h) => new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), h)))
        .find((d) =>
          new Intl.DateTimeFormat("en-GB", { timeZone: "America/New_York", hour: "2-digit", hourCycle: "h23" }).format(
            d
          ) === "09"
        )!
      const post = await createPost({
        content: "Breakfast special",
        account_ids: [accounts["telegram"]],
        scheduled_for: nine.toISOString(),
        timezone: "America/New_York"
      })
      const { page, errors } = await open(`/posts/${post.id}`, "Post")
      const format = (zone: string) =>
        new Intl.DateTimeFormat("en-GB", { dateStyle: "medium", timeStyle: "short", timeZone: zone }).format(nine)
      const shown = (await page.locator("#post-scheduled").textContent()) ?? ""
      expect(shown).toContain(`${format(timezoneId)} (Europe/Berlin)`)
      expect(shown).toContain(`${format("America/New_York")} in America/New_York`)
      expect(format("America/New_York")).toContain("09:00")
      expect(shown).not.toContain("(America/New_York)")
      expect(errors).toEqual([])
      await page.close()
    },
    60_000
  )

  it("the self-refreshing post page keeps keyboard focus and what was typed", async () => {
    // Due in 100 s: the page refreshes itself every 1.5 s until the post settles.
    const post = await createPost({
      content: "Going out soon",
      account_ids: [accounts["telegram"]],
      scheduled_for: new Date(Date.now() + 100_000).toISOString()
    })
    const { page, errors } = await open(`/posts/${post.id}`, "Post")
    const typed = localInput(hoursAhead(4))
    await page.getByLabel(/^New time/).fill(typed)
    // Three answers: the page has drawn itself again at least twice since the typing.
    for (let i = 0; i < 3; i++) {
      await page.waitForResponse((r) => new URL(r.url()).pathname === `/api/v1/posts/${post.id}`, eventually)
    }
    expect(await page.evaluate(() => document.activeElement?.getAttribute("name"))).toBe("scheduled_for")
    expect(await page.getByLabel(/^New time/).inputValue()).toBe(typed)
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)

  it("signed out, the header offers no Sign out", async () => {
    const signedOut = await browser.newContext({ baseURL: server.baseUrl, timezoneId })
    const page = await signedOut.newPage()
    await page.goto("/sign-in")
    await page.locator("main h1", { hasText: "Sign in" }).waitFor(eventually)
    expect(await page.getByRole("button", { name: "Sign out" }).isVisible()).toBe(false)
    expect(await page.getByRole("navigation", { name: "Main" }).isVisible()).toBe(false)
    await signedOut.close()
  })

  /** Monday of the week `weeks` ahead, as the Berlin viewer's calendar names it (YYYY-MM-DD). */
  const mondayAhead = (weeks: number): string => {
    const day = (d: Date, part: Intl.DateTimeFormatOptions) =>
      new Intl.DateTimeFormat("en-CA", { timeZone: timezoneId, ...part }).format(d)
    let d = new Date(Date.now() + weeks * 7 * 86_400_000)
    while (day(d, { weekday: "short" }) !== "Mon") d = new Date(d.getTime() - 86_400_000)
    return day(d, { year: "numeric", month: "2-digit", day: "2-digit" })
  }

  it("the week calendar shows all 200 posts of a busy week, by day, in the viewer's zone", async () => {
    const monday = mondayAhead(2)
    // Monday noon UTC (early afternoon in Berlin) to Sunday noon: inside the Berlin week.
    const first = Date.parse(`${monday}T12:00:00Z`)
    const step = Math.floor((6 * 86_400_000) / 200)
    const times = Array.from({ length: 200 }, (_, i) => new Date(first + i * step))
    // Scheduled posts count against 100 a minute per user: two keys of two creators share the load.
    const keys = await Promise.all([0, 1].map(() =>
      server.withStore(
        Admin.createKey({ organizationId: OrganizationId.make(server.orgId), createdBy: UserId.make(randomUUID()) })
      )
        .then((k) => k.token)
    ))
    await Promise.all([0, 1, 2, 3].map(async (batch) => {
      const posts = times.slice(batch * 50, batch * 50 + 50).map((at, i) => ({
        content: `Busy week post ${batch * 50 + i}`,
        account_ids: [accounts["telegram"]],
        scheduled_for: at.toISOString()
      }))
      const res = await server.request("POST", "/api/v1/posts/bulk", { key: keys[batch % 2]!, body: { posts } })
      expect(res.status, res.text).toBe(201)
    }))
    const { page, errors } = await open(`/calendar?week=${monday}`, "Week calendar")
    expect(await page.locator(".week li.entry").count()).toBe(200)
    expect(await page.locator("main > p.muted").textContent()).toContain("200 posts this week")
    // Each post on its Berlin day, at its Berlin wall clock.
    const berlinDay = (d: Date) =>
      new Intl.DateTimeFormat("en-CA", { timeZone: timezoneId, year: "numeric", month: "2-digit", day: "2-digit" })
        .format(d)
    const perDay = new Map<string, number>()
    for (const at of times) {
      perDay.set(berlinDay(at), (perDay.get(berlinDay(at)) ?? 0) + 1)
    }
    for (const [day, n] of perDay) {
      expect(await page.locator(`.week section[data-day="${day}"] li.entry`).count(), day).toBe(n)
    }
    const last = page.locator(".week li.entry").last()
    expect(await last.locator("time").getAttribute("datetime")).toBe(times[199]!.toISOString())
    expect(await last.locator("time").textContent()).toBe(
      new Intl.DateTimeFormat("en-GB", { timeStyle: "short", timeZone: timezoneId }).format(times[199]!)
    )
    await Browsers.screenshot(page, "calendar-busy-week")
    expect(errors).toEqual([])
    await page.close()
  }, 120_000)

  it("the week calendar shows posts sent with Publish now: published, and failed", async () => {
    const published = await createPost({ content: "Sent at once", account_ids: [accounts["telegram"]] })
    const failed = await createPost({
      content: "Sent at once and refused [sandbox:fail]",
      account_ids: [accounts["telegram"]]
    })
    await expect.poll(async () => [(await getPost(published.id)).status, (await getPost(failed.id)).status], {
      timeout: 30_000
    })
      .toEqual(["published", "failed"])
    const { page, errors } = await open("/calendar", "Week calendar")
    expect(await page.locator(`.week li.entry[data-post="${published.id}"] .status`).textContent()).toBe("published")
    expect(await page.locator(`.week li.entry[data-post="${failed.id}"] .status`).textContent()).toBe("failed")
    const sentAt = Date.parse(
      (await getPost(published.id) as unknown as { destinations: ReadonlyArray<{ published_at: string }> })
        .destinations[0]!.published_at
    )
    expect(await page.locator(`.week li.entry[data-post="${published.id}"] time`).getAttribute("datetime")).toBe(
      new Date(sentAt).toISOString()
    )
    await Browsers.screenshot(page, "calendar")
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)

  const berlin = (iso: string, part: Intl.DateTimeFormatOptions) =>
    new Intl.DateTimeFormat("en-CA", { timeZone: timezoneId, hourCycle: "h23", ...part }).format(new Date(iso))
  const berlinDayOf = (iso: string) => berlin(iso, { year: "numeric", month: "2-digit", day: "2-digit" })
  const berlinClock = (iso: string) => berlin(iso, { hour: "2-digit", minute: "2-digit" })
  const nextDay = (day: string, n = 1) =>
    new Date(Date.parse(`${day}T12:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10)

  let dragged: { id: string; at: string } | undefined

  it("a post dragged to another day of the week moves there at the same time; Undo moves it back", async () => {
    const monday = mondayAhead(3)
    const at = new Date(`${nextDay(monday, 2)}T09:30:00Z`).toISOString()
    const post = await createPost({
      content: "Drag me to Thursday",
      account_ids: [accounts["telegram"]],
      scheduled_for: at
    })
    dragged = { id: post.id, at }
    const { page, errors } = await open(`/calendar?week=${monday}`, "Week calendar")
    const thursday = nextDay(berlinDayOf(at))
    await page.locator(`li.entry[data-post="${post.id}"]`).dragTo(page.locator(`.week section[data-day="${thursday}"]`))
    await expect.poll(async () => berlinDayOf((await getPost(post.id)).scheduled_for!), eventually).toBe(thursday)
    expect(berlinClock((await getPost(post.id)).scheduled_for!)).toBe(berlinClock(at))
    await expect.poll(
      () => page.locator(`section[data-day="${thursday}"] li.entry[data-post="${post.id}"]`).count(),
      eventually
    ).toBe(1)
    expect(await page.locator("#calendar-status").textContent()).toContain("Moved “Drag me to Thursday”")
    await Browsers.screenshot(page, "calendar-moved")
    await page.getByRole("button", { name: "Undo" }).click()
    await expect.poll(async () => (await getPost(post.id)).scheduled_for, eventually).toBe(at)
    await expect.poll(
      () => page.locator(`section[data-day="${berlinDayOf(at)}"] li.entry[data-post="${post.id}"]`).count(),
      eventually
    ).toBe(1)
    // Published posts stay where they went out: they cannot be dragged.
    expect(await page.locator("li.entry.published[draggable=true]").count()).toBe(0)
    // A day's "+ Compose" link composes a post for 09:00 that day.
    const friday = nextDay(monday, 4)
    await page.locator(`.week section[data-day="${friday}"]`).getByRole("link", { name: /^Compose a post for/ }).click()
    await page.locator("main h1", { hasText: "Compose" }).waitFor(eventually)
    expect(await page.getByLabel(/^Schedule for/).inputValue()).toMatch(new RegExp(`^${friday}T09:00(:00)?$`))
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)

  it("the month view shows the posts by day, moves one by drag, and reads as a list at 375 px", async () => {
    const { id, at } = dragged!
    const day = berlinDayOf(at)
    const { page, errors } = await open(`/calendar?view=month&month=${day.slice(0, 7)}`, "Month")
    const cell = (d: string) => page.locator(`.month section[data-day="${d}"]`)
    expect(await cell(day).locator(`li.entry[data-post="${id}"]`).count()).toBe(1)
    await Browsers.screenshot(page, "calendar-month")
    const target = nextDay(day, 2)
    await cell(day).locator(`li.entry[data-post="${id}"]`).dragTo(cell(target))
    await expect.poll(async () => berlinDayOf((await getPost(id)).scheduled_for!), eventually).toBe(target)
    await expect.poll(() => cell(target).locator(`li.entry[data-post="${id}"]`).count(), eventually).toBe(1)
    await page.setViewportSize({ width: 375, height: 800 })
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375)
    await Browsers.screenshot(page, "375px-calendar-month")
    expect(errors).toEqual([])
    await page.close()
  }, 60_000)
})
