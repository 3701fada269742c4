/**
 * The composer and the media library in Debian's Chromium against `herald serve --sandbox`, at 375 px
 * in America/New_York: a preview per targeted platform (the text cut where the platform's limit ends,
 * counted by the server; media as a grid or a carousel, letterboxed outside the platform's range; link
 * cards; thread parts), a thread of three parts for X stored as the API's `threadPosts`, alt text set in
 * the composer stored on the medium, and the media library's upload, search, alt text, usage and delete.
 * One server, one browser and one signed-in context for the file; each test opens its own tab.
 * Screenshots go to test-artifacts/dashboard/.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { Browser, BrowserContext, Page } from "playwright-core"
import * as Browsers from "../support/Browser.js"
import * as HeraldServer from "../support/HeraldServer.js"
import { jpeg, png } from "../support/MediaFixtures.js"

declare const document: { readonly documentElement: { readonly scrollWidth: number } }
declare const localStorage: { readonly clear: () => void }
declare const sessionStorage: {
  readonly getItem: (key: string) => string | null
  readonly setItem: (key: string, value: string) => void
}

const eventually = { timeout: 15_000 }
const timezoneId = "America/New_York"

const skip = Browsers.skipReason
if (skip !== undefined) console.warn(`[skip] composer and media library browser tests: ${skip}`)

interface Medium {
  readonly id: string
  readonly filename: string
  readonly alt_text: string | null
  readonly status: string
}
interface Post {
  readonly id: string
  readonly content: string
  readonly account_ids: ReadonlyArray<number>
  readonly threadPosts: ReadonlyArray<{ readonly content: string; readonly media_ids?: ReadonlyArray<string> }>
  readonly media_ids: ReadonlyArray<string>
}

const image = (name: string, bytes: Uint8Array, mimeType: string) => ({ name, mimeType, buffer: Buffer.from(bytes) })

describe.skipIf(skip !== undefined)("composer previews, threads, alt text and the media library (Chromium)", () => {
  let server: HeraldServer.HeraldServer
  let browser: Browser
  let context: BrowserContext
  const password = "correct horse battery staple 35"

  const api = async <T>(
    method: string,
    path: string,
    body?: unknown
  ): Promise<{ status: number; data: T; error: { code: string; message: string } | null }> => {
    const res = await server.request(method, `/api/v1${path}`, body === undefined ? {} : { body })
    const json = res.json as { data: T; error: { code: string; message: string } | null }
    return { status: res.status, data: json.data, error: json.error }
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
    const email = await Browsers.setOwnerPassword(server, password)
    context = await browser.newContext({
      baseURL: server.baseUrl,
      timezoneId,
      locale: "en-US",
      viewport: { width: 375, height: 800 }
    })
    await Browsers.signInto(context, server, { email, password })
  }, 120_000)

  afterAll(async () => {
    await context?.close()
    await Promise.all([browser?.close(), server?.stop()])
  })

  const open = async (path: string, heading: string): Promise<{ page: Page; errors: Array<string> }> => {
    const page = await context.newPage()
    const errors = Browsers.watchErrors(page)
    // Each test composes from scratch: no work in progress kept by an earlier test is offered back
    // (cleared once per tab, so a reload within the test finds what the test kept).
    await page.addInitScript(() => {
      if (sessionStorage.getItem("composer-test-tab") === null) {
        localStorage.clear()
        sessionStorage.setItem("composer-test-tab", "1")
      }
    })
    // A refused style or script (the content security policy) is a console error, not a page error.
    page.on("console", (m) => {
      if (m.type() === "error" && /Content Security Policy/.test(m.text())) errors.push(m.text())
    })
    await page.goto(path)
    await page.locator("main h1", { hasText: heading }).waitFor(eventually)
    return { page, errors }
  }
  const fitsWidth = async (page: Page) =>
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375)

  it("counts texts as the platforms do, on the server, and refuses a body that is not the expected shape", async () => {
    const counted = await server.request("POST", "/dashboard/api/text-counts", {
      key: null,
      body: {
        texts: [{ platform: "x", text: `see https://example.com/${"p".repeat(60)} ${"é".repeat(10)}` }, {
          platform: "bluesky",
          text: "e\u0301".repeat(301)
        }]
      }
    })
    expect(counted.status).toBe(200)
    const counts = (counted.json as {
      data: {
        counts: ReadonlyArray<
          {
            limits: ReadonlyArray<{ length: number; limit: number; over: boolean }>
            fits: number
            link_card: string | null
          }
        >
      }
    }).data.counts
    // X: the URL counts 23 whatever its length.
    expect(counts[0]!.limits[0]).toMatchObject({ length: 4 + 23 + 1 + 10, limit: 280, over: false })
    expect(counts[0]!.link_card).toBe(`https://example.com/${"p".repeat(60)}`)
    // Bluesky: an accented letter written as two code points is one character; 300 of them fit.
    expect(counts[1]!.limits[0]).toMatchObject({ length: 301, limit: 300, over: true })
    expect(counts[1]!.fits).toBe(2 * 300)
    const refused = await server.request("POST", "/dashboard/api/text-counts", {
      key: null,
      body: { texts: [{ platform: "myspace", text: "hi" }] }
    })
    expect(refused.status).toBe(400)
    expect((refused.json as { error: { code: string } }).error.code).toBe("validation_error")
    const notJson = await server.request("POST", "/dashboard/api/text-counts", {
      key: null,
      rawBody: "{",
      headers: { "content-type": "application/json" }
    })
    expect(notJson.status).toBe(400)
    expect((notJson.json as { error: { code: string } }).error.code).toBe("invalid_json")
  })

  it(
    "previews the post per platform: text cut at each limit, media as each platform lays them out, link cards",
    async () => {
      const { page, errors } = await open("/compose", "Compose")
      for (const platform of ["x", "bluesky", "threads", "instagram", "linkedin"]) {
        await page.getByLabel(`Sandbox ${platform} (${platform})`).check()
      }
      const url = `https://example.com/${"a".repeat(40)}`
      // X: 5 + 23 (any URL) + 1 + 260 = 289 weighted characters, 9 over. Bluesky: 5 + 60 + 1 + 260 = 326, 26 over.
      await page.getByLabel("Text", { exact: true }).fill(`Read ${url} ${"b".repeat(260)}`)
      const region = (platform: string) =>
        page.getByRole("region", {
          name: `${
            { x: "X", bluesky: "Bluesky", threads: "Threads", instagram: "Instagram", linkedin: "LinkedIn" }[platform]
          } preview`
        })
      await expect.poll(() => region("x").locator("[data-preview-count]").first().textContent(), eventually).toBe(
        "289 / 280 weighted characters: too long"
      )
      expect(await region("x").locator("mark[data-over]").textContent()).toBe(`Over the limit: ${"b".repeat(9)}`)
      expect(await region("bluesky").locator("[data-preview-count]").first().textContent()).toBe(
        "326 / 300 characters: too long"
      )
      expect(await region("bluesky").locator("mark[data-over]").textContent()).toBe(`Over the limit: ${"b".repeat(26)}`)
      expect(await region("threads").locator("[data-preview-count]").first().textContent()).toBe("326 / 500 characters")
      expect(await region("threads").locator("mark").count()).toBe(0)
      expect(await region("linkedin").locator("[data-preview-count]").first().textContent()).toBe(
        "326 / 3000 characters"
      )
      // The counters above the previews say the same.
      expect(await page.locator("#counters li[data-platform=x]").textContent()).toBe("x: 289 / 280 (too long)")
      // Link cards where the platform makes one from the text's link; none on Instagram.
      for (const platform of ["x", "bluesky", "threads", "linkedin"]) {
        expect(await region(platform).locator("[data-link-card]").getAttribute("data-link-card")).toBe(url)
      }
      expect(await region("instagram").locator("[data-link-card]").count()).toBe(0)
      await fitsWidth(page)
      await Browsers.screenshot(page, "375px-compose-preview-text")

      // Media: a grid of two on X and Bluesky, a carousel on Instagram where the wide image is letterboxed.
      await page.getByLabel("Text", { exact: true }).fill("Two pictures")
      await page.locator("#media-file").setInputFiles([
        image("wide.png", png(1200, 300), "image/png"),
        image("square.jpg", jpeg(600, 600), "image/jpeg")
      ])
      await expect.poll(() => region("x").locator(".preview-media li.tile").count(), eventually).toBe(2)
      expect(await region("x").locator(".preview-media ul").getAttribute("data-layout")).toBe("grid")
      expect(await region("bluesky").locator(".preview-media li.tile").count()).toBe(2)
      expect(await region("instagram").locator(".preview-media ul").getAttribute("data-layout")).toBe("carousel")
      expect(await region("instagram").locator(".preview-media ul").getAttribute("aria-label")).toBe("Carousel of 2")
      // Instagram takes 4:5 to 1.91:1: the 4:1 image (listed first, as chosen) is letterboxed to 1.91:1, the square is not.
      const tiles = region("instagram").locator("li.tile")
      await expect.poll(() => tiles.nth(0).getAttribute("data-letterboxed"), eventually).toBe("1.91:1")
      expect(await tiles.nth(1).getAttribute("data-letterboxed")).toBe(null)
      expect(await tiles.nth(1).getAttribute("data-media")).toBe(
        await page.getByLabel("Alt text for square.jpg").getAttribute("data-alt")
      )
      expect(await region("x").locator("li.tile img").count()).toBe(2)
      // With media, no link card.
      await page.getByLabel("Text", { exact: true }).fill(`Two pictures ${url}`)
      await expect.poll(() => region("x").locator("[data-preview-count]").first().textContent(), eventually).toBe(
        "36 / 280 weighted characters"
      )
      expect(await page.locator("[data-link-card]").count()).toBe(0)
      await fitsWidth(page)
      await Browsers.screenshot(page, "375px-compose-preview-media")
      expect(errors).toEqual([])
      await page.close()
    },
    90_000
  )

  it(
    "composes a thread of three parts for X, each part with its own counter and media; the API shows the parts",
    async () => {
      // A medium in the library, for part 2.
      const library = await open("/media", "Media library")
      await library.page.locator("#library-file").setInputFiles([image("cedar-bark.png", png(320, 240), "image/png")])
      const bark = library.page.locator("li[data-medium]", { hasText: "cedar-bark.png" })
      await bark.waitFor(eventually)
      const barkId = (await bark.getAttribute("data-medium"))!
      await expect.poll(async () => (await api<Medium>("GET", `/media/${barkId}`)).data.status, eventually).toBe(
        "ready"
      )
      await library.page.close()

      const { page, errors } = await open("/compose", "Compose")
      const thread = page.locator("#thread")
      expect(await thread.isHidden()).toBe(true)
      await page.getByLabel("Sandbox x (x)").check()
      expect(await thread.isVisible()).toBe(true)
      await page.getByLabel("Text", { exact: true }).fill("A thread about cedar, 1/3")
      await page.getByRole("button", { name: "Add a part" }).click()
      await page.getByLabel("Part 2", { exact: true }).fill("Cedar smells of pencils, 2/3")
      await page.getByRole("button", { name: "Add a part" }).click()
      await page.getByLabel("Part 3", { exact: true }).fill("x".repeat(290))
      await expect.poll(() => page.locator("#thread-counter-1").textContent(), eventually).toBe(
        "X: 290 / 280 (too long)"
      )
      expect(await page.locator("#thread-counter-0").textContent()).toBe("X: 28 / 280")
      expect(await page.getByLabel("Part 3", { exact: true }).getAttribute("aria-describedby")).toBe("thread-counter-1")
      await page.getByLabel("Part 3", { exact: true }).fill("End of the thread, 3/3")
      // Part 2 takes a medium from the library; one added to part 3 and removed again leaves it without.
      await page.getByText("Add media to part 2").click()
      await page.getByRole("button", { name: "Add cedar-bark.png to part 2" }).click()
      await expect.poll(() => page.locator("#thread-media-0 [data-thread-medium]").count(), eventually).toBe(1)
      expect(await page.locator("#thread-media-0").textContent()).toContain("cedar-bark.png")
      await page.getByText("Add media to part 3").click()
      await page.getByRole("button", { name: "Add cedar-bark.png to part 3" }).click()
      await page.getByRole("button", { name: "Remove cedar-bark.png from part 3" }).click()
      expect(await page.locator("#thread-media-1").count()).toBe(0)
      await page.getByRole("button", { name: "Add a part" }).click()
      await page.getByLabel("Part 4", { exact: true }).fill("a part removed again")
      await page.getByRole("button", { name: "Remove part 4" }).click()
      expect(await page.getByLabel("Part 4", { exact: true }).count()).toBe(0)
      const preview = page.getByRole("region", { name: "X preview" })
      await expect.poll(() => preview.locator("[data-part]").count(), eventually).toBe(3)
      await expect.poll(() => preview.locator("[data-part='2'] .preview-text").textContent(), eventually).toBe(
        "End of the thread, 3/3"
      )
      await fitsWidth(page)
      await Browsers.screenshot(page, "375px-compose-thread")
      // The parts are kept with the rest of the work in progress: a reload offers them back.
      await page.reload()
      await page.locator("#restored").waitFor(eventually)
      expect(await page.getByLabel("Part 2", { exact: true }).inputValue()).toBe("Cedar smells of pencils, 2/3")
      expect(await page.getByLabel("Part 3", { exact: true }).inputValue()).toBe("End of the thread, 3/3")
      const created = page.waitForResponse((r) => r.url().endsWith("/api/v1/posts") && r.request().method() === "POST")
      await page.getByRole("button", { name: "Save draft" }).click()
      const body = (await created).request().postDataJSON() as { threadPosts: ReadonlyArray<{ content: string }> }
      expect(body.threadPosts).toEqual([{ content: "Cedar smells of pencils, 2/3", media_ids: [barkId] }, {
        content: "End of the thread, 3/3"
      }])
      await page.waitForURL(/\/posts\/[0-9a-f-]{36}$/, eventually)
      const id = /\/posts\/([0-9a-f-]{36})$/.exec(page.url())![1]!
      const stored = await api<Post>("GET", `/posts/${id}`)
      expect(stored.data.content).toBe("A thread about cedar, 1/3")
      expect(stored.data.threadPosts.map((p) => p.content)).toEqual([
        "Cedar smells of pencils, 2/3",
        "End of the thread, 3/3"
      ])
      expect(stored.data.threadPosts.map((p) => p.media_ids ?? [])).toEqual([[barkId], []])
      // Opened again in the composer, the parts are there to edit.
      await page.goto(`/compose?post=${id}`)
      await page.locator("main h1", { hasText: "Edit draft" }).waitFor(eventually)
      expect(await page.getByLabel("Part 3", { exact: true }).inputValue()).toBe("End of the thread, 3/3")
      await expect.poll(() => page.locator("#thread-media-0").textContent(), eventually).toContain("cedar-bark.png")
      expect(errors).toEqual([])
      await page.close()
    },
    90_000
  )

  it(
    "stores the alt text set in the composer on the medium, with a counter for the platforms' own limits",
    async () => {
      const { page, errors } = await open("/compose", "Compose")
      await page.getByLabel("Sandbox instagram (instagram)").check()
      await page.getByLabel("Sandbox x (x)").check()
      await page.getByLabel("Text", { exact: true }).fill("A picture with a description")
      await page.locator("#media-file").setInputFiles([image("cedar.jpg", jpeg(800, 800), "image/jpeg")])
      const alt = page.getByLabel("Alt text for cedar.jpg")
      await alt.waitFor(eventually)
      await alt.fill("y".repeat(120))
      const counter = page.locator(`#${await alt.getAttribute("aria-describedby")}`)
      expect(await counter.textContent()).toBe(
        "120 characters · X: 120 / 1000 · Instagram: 120 / 100 (Instagram keeps the first 100)"
      )
      expect(await counter.getAttribute("class")).toContain("over")
      await alt.fill("A cedar cone on a wooden table")
      expect(await counter.textContent()).toBe("30 characters · X: 30 / 1000 · Instagram: 30 / 100")
      const id = await alt.getAttribute("data-alt")
      await page.getByRole("button", { name: "Save draft" }).click()
      await page.waitForURL(/\/posts\/[0-9a-f-]{36}$/, eventually)
      const medium = await api<Medium>("GET", `/media/${id}`)
      expect(medium.data.alt_text).toBe("A cedar cone on a wooden table")
      const postId = /\/posts\/([0-9a-f-]{36})$/.exec(page.url())![1]!
      expect((await api<Post>("GET", `/posts/${postId}`)).data.media_ids).toEqual([id])
      expect(errors).toEqual([])
      await page.close()
    },
    90_000
  )

  it(
    "suggests captions when the server has an AI provider, each one click from the post; says so once when it has none",
    async () => {
      const { page, errors } = await open("/compose", "Compose")
      await page.getByLabel("Sandbox x (x)").check()
      await page.getByLabel("Text", { exact: true }).fill("Our cedar workshop opens on Saturday")
      await page.getByText("Suggest captions with AI").click()
      // The panel's topic is filled from the text by its toggle event, which the browser fires after the click.
      await expect.poll(() => page.getByLabel("What the post is about").inputValue(), eventually).toBe(
        "Our cedar workshop opens on Saturday"
      )
      await page.getByLabel("Tone").selectOption("witty")
      const answered = page.waitForResponse((r) => r.url().endsWith("/api/v1/ai/generate-caption"))
      await page.getByRole("button", { name: "Suggest captions", exact: true }).click()
      const response = await answered
      expect(response.request().postDataJSON()).toEqual({
        topic: "Our cedar workshop opens on Saturday",
        tone: "witty",
        platform: "x",
        count: 3
      })
      const variants =
        ((await response.json()) as { data: { variants: ReadonlyArray<{ text: string; length: number }> } }).data
          .variants
      await expect.poll(() => page.locator("[data-suggestion]").count(), eventually).toBe(variants.length)
      expect(variants.length).toBeGreaterThan(0)
      expect(await page.locator("[data-suggestion='0'] .counter").textContent()).toContain(
        `${variants[0]!.length} / 280 on X`
      )
      await page.getByRole("button", { name: `Use suggestion ${variants.length}` }).click()
      expect(await page.getByLabel("Text", { exact: true }).inputValue()).toBe(variants[variants.length - 1]!.text)
      await fitsWidth(page)
      await Browsers.screenshot(page, "375px-compose-ai-captions")
      expect(errors).toEqual([])
      await page.close()

      // A server without a provider answers misconfig: the panel says so, and is not offered again in the tab.
      const second = await open("/compose", "Compose")
      await second.page.route("**/api/v1/ai/generate-caption", (route) =>
        route.fulfill({
          status: 400,
          contentType: "application/json",
          body: JSON.stringify({
            data: null,
            error: { code: "misconfig", message: "No AI provider is configured", retryable: false },
            meta: { request_id: "r", timestamp: new Date().toISOString() }
          })
        }))
      await second.page.getByLabel("Text", { exact: true }).fill("Anything")
      await second.page.getByText("Suggest captions with AI").click()
      await second.page.getByRole("button", { name: "Suggest captions", exact: true }).click()
      await second.page.getByText("This server has no AI provider configured, so there are no suggestions.").waitFor(
        eventually
      )
      await second.page.reload()
      await second.page.locator("main h1", { hasText: "Compose" }).waitFor(eventually)
      expect(await second.page.locator("#ai-captions").count()).toBe(0)
      expect(second.errors).toEqual([])
      await second.page.close()
    },
    90_000
  )

  it("media library pages through the library, twenty at a time, newest first", async () => {
    // 21 more media through the API (presign, PUT the bytes, complete).
    for (let i = 0; i < 21; i++) {
      const bytes = png(20 + i, 20)
      const presigned = await api<{ id: string; upload_url: string; upload_headers: Record<string, string> }>(
        "POST",
        "/media/upload",
        {
          filename: `page-${String(i).padStart(2, "0")}.png`,
          content_type: "image/png",
          file_size: bytes.length
        }
      )
      expect(presigned.status, JSON.stringify(presigned.error)).toBe(201)
      const uploaded = await fetch(presigned.data.upload_url, {
        method: "PUT",
        headers: presigned.data.upload_headers,
        body: bytes
      })
      expect(uploaded.status).toBeLessThan(300)
      expect((await api("POST", `/media/${presigned.data.id}/complete`, {})).status).toBe(200)
    }
    const total = (await api<{ pagination: { total: number } }>("GET", "/media?limit=1")).data.pagination.total
    const { page, errors } = await open("/media", "Media library")
    await expect.poll(() => page.locator("#media-status").textContent(), eventually).toBe(`Showing 1–20 of ${total}.`)
    expect(await page.locator("li[data-medium] h3").first().textContent()).toBe("page-20.png")
    expect(await page.getByRole("button", { name: "Previous page" }).isDisabled()).toBe(true)
    await page.getByRole("button", { name: "Next page" }).click()
    await expect.poll(() => page.locator("#media-status").textContent(), eventually).toBe(
      `Showing 21–${Math.min(40, total)} of ${total}.`
    )
    expect(page.url()).toContain("offset=20")
    expect(await page.locator("li[data-medium]").count()).toBe(Math.min(20, total - 20))
    await page.getByRole("button", { name: "Previous page" }).click()
    await expect.poll(() => page.locator("#media-status").textContent(), eventually).toBe(`Showing 1–20 of ${total}.`)
    // A kind filter with no match says so.
    await page.getByLabel("Kind").selectOption("document")
    await page.getByRole("button", { name: "Search", exact: true }).click()
    await expect.poll(() => page.locator("#media-status").textContent(), eventually).toBe("No media match.")
    expect(errors).toEqual([])
    await page.close()
  }, 120_000)

  it(
    "media library: upload, search, set alt text, see where a medium is used, delete with the in-use warning",
    async () => {
      const { page, errors } = await open("/media", "Media library")
      await page.locator("#library-file").setInputFiles([
        image("harbour-boats.png", png(640, 480), "image/png"),
        image("forest-path.jpg", jpeg(500, 700), "image/jpeg")
      ])
      const boats = page.locator("li[data-medium]", { hasText: "harbour-boats.png" })
      const forest = page.locator("li[data-medium]", { hasText: "forest-path.jpg" })
      await boats.waitFor(eventually)
      await forest.waitFor(eventually)
      const boatsId = (await boats.getAttribute("data-medium"))!
      const forestId = (await forest.getAttribute("data-medium"))!

      // Alt text, saved on the medium.
      await page.getByLabel("Alt text for harbour-boats.png").fill("Fishing boats in a small harbour at dusk")
      await boats.getByRole("button", { name: "Save alt text" }).click()
      await expect.poll(async () => (await api<Medium>("GET", `/media/${boatsId}`)).data.alt_text, eventually).toBe(
        "Fishing boats in a small harbour at dusk"
      )

      // Search: by file name, and by alt text.
      await page.getByLabel("Search by file name or alt text").fill("forest")
      await page.getByRole("button", { name: "Search", exact: true }).click()
      await expect.poll(() => page.locator("li[data-medium]").count(), eventually).toBe(1)
      expect(await page.locator("#media-status").textContent()).toBe("Showing 1–1 of 1 matching “forest”.")
      expect(page.url()).toContain("q=forest")
      await page.getByLabel("Search by file name or alt text").fill("dusk")
      await page.getByRole("button", { name: "Search", exact: true }).click()
      await expect.poll(() => page.locator("li[data-medium] h3").allTextContents(), eventually).toEqual([
        "harbour-boats.png"
      ])
      await page.getByLabel("Search by file name or alt text").fill("")
      await page.getByRole("button", { name: "Search", exact: true }).click()
      await expect.poll(() => page.locator("li[data-medium]", { hasText: "forest-path.jpg" }).count(), eventually).toBe(
        1
      )

      // Where it is used: a scheduled post names the forest picture.
      const accounts =
        (await api<{ accounts: ReadonlyArray<{ id: number; platform: string }> }>("GET", "/accounts")).data.accounts
      const x = accounts.find((a) => a.platform === "x")!.id
      const post = await api<Post>("POST", "/posts", {
        content: "A walk in the woods",
        account_ids: [x],
        media_ids: [forestId],
        scheduled_for: new Date(Date.now() + 3 * 86_400_000).toISOString()
      })
      expect(post.status, JSON.stringify(post.error)).toBe(201)
      const postId = post.data.id
      await forest.getByRole("button", { name: "Where it is used" }).click()
      await expect.poll(() => forest.locator("[data-usage-count]").getAttribute("data-usage-count"), eventually).toBe(
        "1"
      )
      expect(await forest.locator(`[data-usage] a[href="/posts/${postId}"]`).textContent()).toBe("A walk in the woods")
      await boats.getByRole("button", { name: "Where it is used" }).click()
      await expect.poll(() => boats.locator("[data-usage]").textContent(), eventually).toBe("Not used by any post.")
      await fitsWidth(page)
      await Browsers.screenshot(page, "375px-media-library")

      // Delete: a medium in use warns about the post still to be sent; Cancel keeps it.
      await forest.getByRole("button", { name: "Delete" }).click()
      const dialog = page.getByRole("dialog")
      await dialog.waitFor(eventually)
      expect(await dialog.textContent()).toContain("1 post still to be sent uses it and will fail to publish it.")
      await dialog.getByRole("button", { name: "Cancel" }).click()
      expect((await api<Medium>("GET", `/media/${forestId}`)).status).toBe(200)
      // The unused one is deleted.
      await boats.getByRole("button", { name: "Delete" }).click()
      await dialog.waitFor(eventually)
      expect(await dialog.textContent()).toContain("Delete harbour-boats.png? This cannot be undone.")
      await dialog.getByRole("button", { name: "Delete" }).click()
      await expect.poll(() => page.locator("li[data-medium]", { hasText: "harbour-boats.png" }).count(), eventually)
        .toBe(0)
      expect((await api<Medium>("GET", `/media/${boatsId}`)).status).toBe(404)
      expect(errors).toEqual([])
      await page.close()

      // The composer takes a medium from the library.
      const composer = await open("/compose", "Compose")
      await composer.page.getByLabel("Sandbox x (x)").check()
      await composer.page.getByLabel("Text", { exact: true }).fill("From the library")
      await composer.page.getByText("Choose from the media library").click()
      await composer.page.getByRole("button", { name: "Add forest-path.jpg" }).click()
      expect(await composer.page.getByRole("button", { name: "Add forest-path.jpg" }).isDisabled()).toBe(true)
      await composer.page.getByLabel("Alt text for forest-path.jpg").waitFor(eventually)
      await expect.poll(
        () => composer.page.getByRole("region", { name: "X preview" }).locator("li.tile").count(),
        eventually
      ).toBe(1)
      await composer.page.getByRole("button", { name: "Save draft" }).click()
      await composer.page.waitForURL(/\/posts\/[0-9a-f-]{36}$/, eventually)
      const drafted = /\/posts\/([0-9a-f-]{36})$/.exec(composer.page.url())![1]!
      expect((await api<Post>("GET", `/posts/${drafted}`)).data.media_ids).toEqual([forestId])
      expect(composer.errors).toEqual([])
      await composer.page.close()
    },
    120_000
  )
})
