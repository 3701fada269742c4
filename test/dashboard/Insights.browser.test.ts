/**
 * The analytics page and bulk scheduling from a CSV file, in Debian's Chromium against `herald serve
 * --sandbox`, at 375 px in Europe/Berlin. Analytics: the figures the page shows (its tables, and the
 * data each chart draws) are the ones GET /analytics/summary and GET /posts answer for the same
 * period; the period picker asks for a custom range; an unreachable server is said so. Bulk: a file
 * with a row that names no platform is checked (the problem shows on that row, nothing is created),
 * then one click schedules the other rows (the button locked while it runs), and the fixed row is
 * scheduled after a second check; the posts are read back through the API. Screenshots go to
 * test-artifacts/dashboard/.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import type { Browser, BrowserContext, Page } from "playwright-core"
import * as Browsers from "../support/Browser.js"
import * as HeraldServer from "../support/HeraldServer.js"

declare const document: {
  readonly documentElement: { readonly scrollWidth: number }
  readonly querySelectorAll: (selector: string) => Iterable<{ readonly id: string }>
}
/** What the page's Chart.js answers about a canvas. */
interface ChartGlobal {
  readonly Chart: {
    readonly getChart: (canvas: unknown) => {
      readonly data: {
        readonly labels: Array<string>
        readonly datasets: Array<{ label: string; data: Array<number> }>
      }
    } | undefined
  }
}

const eventually = { timeout: 15_000 }
const timezoneId = "Europe/Berlin"
const metricNames = ["views", "likes", "comments", "shares", "impressions", "saves", "clicks"] as const
type Metric = typeof metricNames[number]
type Metrics = Record<Metric, number>

const skip = Browsers.skipReason
if (skip !== undefined) console.warn(`[skip] dashboard analytics and bulk browser tests: ${skip}`)

interface Destination extends Metrics {
  readonly account_id: number
  readonly account_name: string
  readonly platform: string
  readonly status: string
}
interface Post {
  readonly id: string
  readonly content: string
  readonly status: string
  readonly created_at: string
  readonly scheduled_for: string | null
  readonly timezone: string | null
  readonly destinations: ReadonlyArray<Destination>
}
interface Summary {
  readonly from: string | null
  readonly to: string | null
  readonly posts: { readonly total: number; readonly by_status: Record<string, number> }
  readonly platforms: Record<string, Metrics & { destinations: number }>
  readonly totals: Metrics & { destinations: number }
  readonly ai_credits_used: number
}

/** The figures of a table cell as a number ("1,234" -> 1234). */
const figure = (text: string | null): number => Number((text ?? "").replace(/[^\d]/g, ""))

/** The calendar day `days` from now in the viewer's zone, as YYYY-MM-DD. */
const dayAhead = (days: number) =>
  new Intl.DateTimeFormat("en-CA", { timeZone: timezoneId, year: "numeric", month: "2-digit", day: "2-digit" })
    .format(new Date(Date.now() + days * 86_400_000))

/** The instant of a wall-clock time in Europe/Berlin. */
const berlinInstant = (date: string, time: string): string => {
  const guess = new Date(`${date}T${time}:00Z`)
  const offset = (at: Date) => {
    const parts = Object.fromEntries(
      new Intl.DateTimeFormat("en-CA", {
        timeZone: timezoneId,
        year: "numeric",
        month: "2-digit",
        day: "2-digit",
        hour: "2-digit",
        minute: "2-digit",
        hourCycle: "h23"
      }).formatToParts(at).map((p) => [p.type, p.value])
    )
    return Date.UTC(+parts.year!, +parts.month! - 1, +parts.day!, +parts.hour!, +parts.minute!) - at.getTime()
  }
  return new Date(guess.getTime() - offset(guess)).toISOString()
}

describe.skipIf(skip !== undefined)("analytics and bulk scheduling in the dashboard (Chromium)", () => {
  let server: HeraldServer.HeraldServer
  let browser: Browser
  let context: BrowserContext
  const accounts: Record<string, number> = {}

  const api = async <T>(method: string, path: string, body?: unknown): Promise<{ status: number; data: T }> => {
    const res = await server.request(method, `/api/v1${path}`, body === undefined ? {} : { body })
    expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300)
    return { status: res.status, data: (res.json as { data: T }).data }
  }
  const getPost = async (id: string) => (await api<Post>("GET", `/posts/${id}`)).data
  const search = async (text: string) =>
    (await api<{ posts: ReadonlyArray<Post> }>("GET", `/posts?search=${encodeURIComponent(text)}&limit=100`)).data
      .posts

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
      viewport: { width: 375, height: 800 }
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

  const open = async (path: string, heading: string): Promise<{ page: Page; errors: Array<string> }> => {
    const page = await context.newPage()
    const errors = Browsers.watchErrors(page)
    await page.goto(path)
    await page.locator("main h1", { hasText: heading }).waitFor(eventually)
    return { page, errors }
  }

  /** The figures a chart draws, by the id of its table's wrapper: labels and each dataset's data. */
  const chartData = (page: Page, tableId: string) =>
    page.evaluate((id) => {
      for (const canvas of document.querySelectorAll(`figure:has(#${id}) canvas`)) {
        const chart = (globalThis as unknown as ChartGlobal).Chart.getChart(canvas)
        if (chart) {
          return {
            labels: chart.data.labels,
            datasets: Object.fromEntries(chart.data.datasets.map((d) => [d.label, d.data]))
          }
        }
      }
      return null
    }, tableId)

  it(
    "charts posts by status, metrics per platform and per account, and top posts, with the API's figures",
    async () => {
      const create = async (body: Record<string, unknown>) => (await api<Post>("POST", "/posts", body)).data
      const a = await create({ content: "Analytics: spring launch", account_ids: [accounts["x"], accounts["bluesky"]] })
      const b = await create({ content: "Analytics: behind the scenes", account_ids: [accounts["bluesky"]] })
      const c = await create({ content: "Analytics: broken [sandbox:fail]", account_ids: [accounts["telegram"]] })
      await create({ content: "Analytics: a draft", draft: true })
      await create({
        content: "Analytics: later",
        account_ids: [accounts["linkedin"]],
        scheduled_for: new Date(Date.now() + 48 * 3_600_000).toISOString()
      })
      await expect.poll(async () => (await getPost(a.id)).status, eventually).toBe("published")
      await expect.poll(async () => (await getPost(b.id)).status, eventually).toBe("published")
      await expect.poll(async () => (await getPost(c.id)).status, eventually).toBe("failed")
      // Metrics as a sync would leave them (the sandbox's grow over hours), and no fetch due any more.
      const seeded: Record<string, Metrics> = {
        [`${a.id}:x`]: { views: 1200, likes: 80, comments: 12, shares: 9, impressions: 3400, saves: 5, clicks: 44 },
        [`${a.id}:bluesky`]: { views: 0, likes: 31, comments: 4, shares: 6, impressions: 0, saves: 2, clicks: 0 },
        [`${b.id}:bluesky`]: { views: 0, likes: 140, comments: 20, shares: 15, impressions: 0, saves: 3, clicks: 1 }
      }
      await server.withStore(
        Effect.flatMap(SqlClient.SqlClient, (sql) =>
          Effect.forEach(Object.entries(seeded), ([key, metrics]) => {
            const [postId, platform] = key.split(":")
            return sql`UPDATE destinations SET metrics = ${JSON.stringify(metrics)}, metrics_fetched_at = ${Date.now()},
            metrics_step = 99, next_metrics_at = NULL WHERE post_id = ${postId!} AND platform = ${platform!}`
          }))
      )
      const summary = (await api<Summary>("GET", "/analytics/summary")).data
      expect(summary.totals.likes).toBe(80 + 31 + 140)
      expect(summary.posts.total).toBe(5)

      const { page, errors } = await open("/analytics", "Analytics")
      await page.locator("#totals").waitFor(eventually)
      // The totals are the summary's.
      expect(figure(await page.locator("#totals [data-metric=posts] dd").textContent())).toBe(summary.posts.total)
      for (const m of [...metricNames, "destinations"] as const) {
        expect(figure(await page.locator(`#totals [data-metric=${m}] dd`).textContent()), m).toBe(summary.totals[m])
      }
      // Posts by status: the summary's row, and the days add up to it.
      for (const [status, count] of Object.entries(summary.posts.by_status)) {
        expect(figure(await page.locator(`#status-totals [data-status=${status}]`).textContent()), status).toBe(count)
      }
      const statusChart = await chartData(page, "status-table")
      expect(statusChart).not.toBeNull()
      for (const [label, data] of Object.entries(statusChart!.datasets)) {
        const status = label.toLowerCase().replaceAll(" ", "_")
        expect(data.reduce((x, y) => x + y, 0), label).toBe(summary.posts.by_status[status])
      }
      // Per platform: the table and the chart both carry the summary's figures.
      const platforms = Object.keys(summary.platforms)
      expect(platforms.sort()).toEqual(["bluesky", "linkedin", "telegram", "x"])
      expect(await page.locator("#platform-table tbody tr").count()).toBe(platforms.length)
      const platformChart = await chartData(page, "platform-table")
      for (const p of platforms) {
        const row = page.locator(`#platform-table tr[data-platform=${p}]`)
        for (const m of [...metricNames, "destinations"] as const) {
          expect(figure(await row.locator(`[data-metric=${m}]`).textContent()), `${p} ${m}`).toBe(
            summary.platforms[p]![m]
          )
        }
      }
      for (const m of metricNames) {
        const label = m.charAt(0).toUpperCase() + m.slice(1)
        expect(platformChart!.datasets[label], m).toEqual(
          Object.entries(summary.platforms).map(([, p]) => p[m])
        )
      }
      // Per account: what the posts of the period say, destination by destination.
      const posts = (await api<{ posts: ReadonlyArray<Post> }>(
        "GET",
        `/posts?limit=100&created_after=${summary.from}&created_before=${summary.to}`
      )).data.posts
      const perAccount = new Map<number, Metrics & { destinations: number }>()
      for (const d of posts.flatMap((p) => p.destinations)) {
        const entry = perAccount.get(d.account_id) ??
          { destinations: 0, views: 0, likes: 0, comments: 0, shares: 0, impressions: 0, saves: 0, clicks: 0 }
        entry.destinations++
        for (const m of metricNames) entry[m] += d[m]
        perAccount.set(d.account_id, entry)
      }
      expect(await page.locator("#account-table tbody tr").count()).toBe(perAccount.size)
      for (const [id, expected] of perAccount) {
        const row = page.locator(`#account-table tr[data-account="${id}"]`)
        for (const m of [...metricNames, "destinations"] as const) {
          expect(figure(await row.locator(`[data-metric=${m}]`).textContent()), `account ${id} ${m}`).toBe(expected[m])
        }
      }
      // Top posts: by interactions (likes, comments, shares, saves, clicks), posts without metrics left out.
      const interactions = (p: Post) =>
        p.destinations.reduce((n, d) => n + d.likes + d.comments + d.shares + d.saves + d.clicks, 0)
      const ranked = posts.filter((p) => p.destinations.some((d) => metricNames.some((m) => d[m] > 0)))
        .sort((x, y) => interactions(y) - interactions(x))
      expect(ranked.map((p) => p.id)).toEqual([a.id, b.id])
      expect(
        await page.locator("#top-table tbody tr").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-post")))
      )
        .toEqual(ranked.map((p) => p.id))
      expect(figure(await page.locator(`#top-table tr[data-post="${a.id}"] [data-metric=interactions]`).textContent()))
        .toBe(interactions(ranked[0]!))
      expect((await chartData(page, "top-table"))!.datasets["Interactions"]).toEqual(ranked.map(interactions))
      // The tables scroll sideways at 375 px: each scrolling wrapper is a named region a keyboard reaches.
      expect(
        await page.locator(".table-wrap").evaluateAll((ws) =>
          ws.map((w) => [w.getAttribute("tabindex"), w.getAttribute("role"), w.getAttribute("aria-label")])
        )
      ).toEqual([
        ["0", "region", "Posts by status, table"],
        ["0", "region", "Metrics per platform, table"],
        ["0", "region", "Metrics per account, table"],
        ["0", "region", "Top posts, table"]
      ])
      // Each chart is labelled as a picture whose figures are in its table.
      for (
        const label of await page.locator("canvas").evaluateAll((cs) => cs.map((c) => c.getAttribute("aria-label")))
      ) {
        expect(label).toMatch(/: a bar chart; the table below gives its figures\.$/)
      }
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375)
      await Browsers.screenshot(page, "375px-analytics")

      // A custom range of past days without posts: the period's summary is empty, and the page says so.
      await page.getByLabel("Period", { exact: true }).selectOption("custom")
      await page.getByLabel("First day").fill(dayAhead(-20))
      await page.getByLabel("Last day").fill(dayAhead(-10))
      await page.getByRole("button", { name: "Show" }).click()
      await page.waitForURL(/period=custom/)
      await expect.poll(() => page.locator("#analytics").textContent(), eventually).toContain(
        "No posts were created in this period"
      )
      const url = new URL(page.url())
      const [y1, m1, d1] = url.searchParams.get("from")!.split("-").map(Number)
      const [y2, m2, d2] = url.searchParams.get("to")!.split("-").map(Number)
      // Whole days in the viewer's zone: Berlin's midnight, the last day included.
      const from = berlinInstant(`${y1}-${String(m1).padStart(2, "0")}-${String(d1).padStart(2, "0")}`, "00:00")
      const to = new Date(
        new Date(berlinInstant(`${y2}-${String(m2).padStart(2, "0")}-${String(d2).padStart(2, "0")}`, "00:00"))
          .getTime() +
          86_400_000
      )
      const custom = (await api<Summary>("GET", `/analytics/summary?period=custom&from=${from}&to=${to.toISOString()}`))
        .data
      expect(custom.posts.total).toBe(0)
      await Browsers.screenshot(page, "375px-analytics-empty")

      // While the summary is on its way the page says it is loading (and is busy), then shows the figures.
      let release!: () => void
      const held = new Promise<void>((resolve) => (release = resolve))
      await page.route("**/api/v1/analytics/summary**", async (route) => {
        await held
        await route.continue()
      })
      await page.goto("/analytics?period=all")
      await expect.poll(() => page.locator("#analytics").textContent(), eventually).toBe("Loading the figures…")
      expect(await page.locator("#analytics").getAttribute("aria-busy")).toBe("true")
      release()
      await page.locator("#totals").waitFor(eventually)
      // Busy until the charts are drawn too (the chart library loads after the figures are shown).
      await expect.poll(() => page.locator("#analytics").getAttribute("aria-busy"), eventually).toBeNull()
      await page.unroute("**/api/v1/analytics/summary**")

      // The server out of reach: the page says so instead of showing figures.
      await page.route("**/api/v1/analytics/summary**", (route) => route.abort("connectionrefused"))
      await page.goto("/analytics?period=all")
      await expect.poll(() => page.locator("#analytics [role=alert]").textContent(), eventually).toContain(
        "The figures could not be loaded. The server could not be reached."
      )
      expect(await page.locator("canvas").count()).toBe(0)
      await Browsers.screenshot(page, "375px-analytics-error")
      expect(errors).toEqual([])
      await page.close()
    },
    90_000
  )

  it(
    "checks a CSV file row by row, shows the row with a problem, then schedules the others in one locked click",
    async () => {
      const marker = `bulk-${randomUUID().slice(0, 8)}`
      const first = dayAhead(3)
      const second = dayAhead(4)
      const header = "date,time,content,platforms"
      const lines = [
        `${first},10:00,"${marker} one, with a comma",x+bluesky`,
        `${second},18:30,"${marker} two said ""hello""\nover two lines",bluesky`,
        `${second},19:00,${marker} three,myspace`
      ]
      const file = (rows: ReadonlyArray<string>) => ({
        name: "posts.csv",
        mimeType: "text/csv",
        buffer: Buffer.from(`${header}\r\n${rows.join("\r\n")}\r\n`)
      })
      const { page, errors } = await open("/bulk", "Bulk schedule")
      expect(await page.getByLabel("Time zone of the dates and times").inputValue()).toBe(timezoneId)
      await page.getByLabel("CSV file").setInputFiles(file(lines))
      await page.getByRole("button", { name: "Check rows" }).click()
      await expect.poll(() => page.locator("#bulk-summary").textContent(), eventually).toBe(
        "3 rows checked: 2 ready, 1 row with a problem."
      )
      // The problem is on the file's line 5 (the second row's text spans lines 3 and 4), in plain words.
      const bad = page.locator("#bulk-results tr[data-line='5']")
      expect(await bad.getAttribute("class")).toBe("row-error")
      expect(await bad.locator(".result").textContent()).toBe(
        "Problem: 'myspace' is neither a platform nor an account id."
      )
      // Also listed above the table, by line.
      expect(await page.locator("#bulk-problems li").allTextContents()).toEqual([
        "Line 5: 'myspace' is neither a platform nor an account id."
      ])
      // The other rows are ready at the times the API's own dry run gives.
      const dryRun = (await api<{ results: ReadonlyArray<{ status: string; scheduledFor: string | null }> }>(
        "POST",
        "/posts/bulk-schedule",
        {
          timezone: timezoneId,
          dryRun: true,
          posts: [
            { date: first, time: "10:00", content: `${marker} one, with a comma`, platforms: "x+bluesky" },
            {
              date: second,
              time: "18:30",
              content: `${marker} two said "hello"\nover two lines`,
              platforms: "bluesky"
            },
            { date: second, time: "19:00", content: `${marker} three`, platforms: "myspace" }
          ]
        }
      )).data
      expect(dryRun.results.map((r) => r.status)).toEqual(["valid", "valid", "error"])
      for (const [line, result] of [[2, dryRun.results[0]!], [3, dryRun.results[1]!]] as const) {
        const row = page.locator(`#bulk-results tr[data-line='${line}']`)
        expect(await row.getAttribute("data-status")).toBe("valid")
        expect(await row.locator(".result time").getAttribute("datetime")).toBe(result.scheduledFor)
      }
      expect(dryRun.results[0]!.scheduledFor).toBe(berlinInstant(first, "10:00"))
      expect(await search(marker)).toEqual([])
      expect(await page.getByRole("region", { name: "Rows of the file" }).getAttribute("tabindex")).toBe("0")
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375)
      await Browsers.screenshot(page, "375px-bulk-check")

      // One click schedules the ready rows; while the call runs the button is locked.
      let release!: () => void
      const held = new Promise<void>((resolve) => (release = resolve))
      const calls: Array<unknown> = []
      await page.route("**/api/v1/posts/bulk-schedule", async (route) => {
        calls.push(route.request().postDataJSON())
        await held
        await route.continue()
      })
      const schedule = page.getByRole("button", { name: "Schedule 2 posts" })
      await schedule.click()
      await expect.poll(() => schedule.isDisabled(), eventually).toBe(true)
      await schedule.click({ force: true }).catch(() => {})
      expect(await page.getByRole("button", { name: "Check rows" }).isDisabled()).toBe(true)
      release()
      await expect.poll(() => page.locator("#bulk-summary").textContent(), eventually).toBe(
        "2 posts scheduled; 1 row not scheduled."
      )
      expect(calls).toHaveLength(1)
      expect(calls[0]).toMatchObject({ dryRun: false, timezone: timezoneId })
      expect((calls[0] as { posts: Array<unknown> }).posts).toHaveLength(2)
      const created = await search(marker)
      expect(created).toHaveLength(2)
      const byTime = [...created].sort((x, y) => (x.scheduled_for! < y.scheduled_for! ? -1 : 1))
      expect(byTime.map((p) => [p.content, p.status, p.scheduled_for, p.destinations.map((d) => d.platform).sort()]))
        .toEqual([
          [`${marker} one, with a comma`, "scheduled", berlinInstant(first, "10:00"), ["bluesky", "x"]],
          [`${marker} two said "hello"\nover two lines`, "scheduled", berlinInstant(second, "18:30"), ["bluesky"]]
        ])
      expect(await page.locator("#bulk-results tr[data-line='5']").getAttribute("data-status")).toBe("error")
      for (const post of created) {
        expect(await page.locator(`#bulk-results a[href="/posts/${post.id}"]`).count()).toBe(1)
      }
      await Browsers.screenshot(page, "375px-bulk-scheduled")
      await page.unroute("**/api/v1/posts/bulk-schedule")

      // The row fixed in the file is checked again and scheduled.
      await page.getByLabel("CSV file").setInputFiles(file([`${second},19:00,${marker} three,telegram`]))
      expect(await page.locator("#bulk-results").textContent()).toBe("")
      await page.getByRole("button", { name: "Check rows" }).click()
      await expect.poll(() => page.locator("#bulk-summary").textContent(), eventually).toBe(
        "1 row checked: 1 ready, 0 rows with a problem."
      )
      await page.getByRole("button", { name: "Schedule 1 post" }).click()
      await expect.poll(() => page.locator("#bulk-summary").textContent(), eventually).toBe("1 post scheduled.")
      const all = await search(marker)
      expect(all).toHaveLength(3)
      expect(all.find((p) => p.content === `${marker} three`)).toMatchObject({
        status: "scheduled",
        scheduled_for: berlinInstant(second, "19:00"),
        timezone: timezoneId
      })
      expect(errors).toEqual([])
      await page.close()
    },
    90_000
  )

  it("a file over X's daily limit is refused as a batch: the check says why, and offers no Schedule", async () => {
    const marker = `limit-${randomUUID().slice(0, 8)}`
    const date = dayAhead(9)
    const rows = Array.from({ length: 11 }, (_, i) => `${date},10:${String(i).padStart(2, "0")},${marker} ${i},x`)
    // On the trial plan X takes 10 posts a day (the sandbox's organization is on scale, 500).
    expect((await server.cli(["orgs", "set-plan", server.orgId, "trial", "--status", "trialing"])).code).toBe(0)
    const { page, errors } = await open("/bulk", "Bulk schedule")
    await page.getByLabel("CSV file").setInputFiles({
      name: "posts.csv",
      mimeType: "text/csv",
      buffer: Buffer.from(`date,time,content,platforms\n${rows.join("\n")}\n`)
    })
    await page.getByRole("button", { name: "Check rows" }).click()
    await expect.poll(() => page.locator("#bulk-summary").textContent(), eventually).toBe(
      "11 rows checked: nothing can be scheduled."
    )
    // The API's own dry run is refused the same way (422), with the plan's limit.
    const res = await server.request("POST", "/api/v1/posts/bulk-schedule", {
      body: {
        timezone: timezoneId,
        dryRun: true,
        posts: rows.map((r) => {
          const [d, t, content, platforms] = r.split(",")
          return { date: d, time: t, content, platforms }
        })
      }
    })
    expect(res.status).toBe(422)
    const limit = (res.json as { error: { details: { batchErrors: ReadonlyArray<{ limit: number }> } } }).error.details
      .batchErrors[0]!.limit
    expect(await page.locator("#bulk-results [role=alert]").textContent()).toBe(
      `Nothing can be scheduled: X allows ${limit} posts per day on the trial plan; ${date} (${timezoneId}) would ` +
        `have 11 (0 already scheduled, 11 in this batch). Change the file and check it again.`
    )
    expect(await page.locator("#bulk-results tbody tr .result").first().textContent()).toMatch(
      /^Ready once the problem above is solved: /
    )
    expect(await page.locator("#bulk-schedule").count()).toBe(0)
    expect(await search(marker)).toEqual([])
    await Browsers.screenshot(page, "375px-bulk-batch-refused")
    expect(errors).toEqual([])
    await page.close()
    expect((await server.cli(["orgs", "set-plan", server.orgId, "scale", "--status", "trialing"])).code).toBe(0)
  })

  it("refuses a file it cannot read, next to the file field, without calling the API", async () => {
    const { page, errors } = await open("/bulk", "Bulk schedule")
    const calls: Array<string> = []
    page.on("request", (r) => {
      if (r.url().includes("/bulk-schedule")) calls.push(r.url())
    })
    await page.getByLabel("CSV file").setInputFiles({
      name: "posts.csv",
      mimeType: "text/csv",
      buffer: Buffer.from("date,content\n2030-01-01,hello\n")
    })
    await page.getByRole("button", { name: "Check rows" }).click()
    await expect.poll(() => page.locator("[data-field=file] .field-error").textContent(), eventually).toBe(
      "The first line of the file must name the columns; time, platforms are missing (it has: date, content)."
    )
    expect(await page.getByLabel("CSV file").getAttribute("aria-invalid")).toBe("true")
    expect(calls).toEqual([])
    await Browsers.screenshot(page, "375px-bulk-refused")
    expect(errors).toEqual([])
    await page.close()
  })
})
