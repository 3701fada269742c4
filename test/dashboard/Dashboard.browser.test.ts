/**
 * The dashboard in Debian's Chromium against the real `herald serve --sandbox`:
 * the owner sets a password from the first-start link and signs in; composes and schedules a post with
 * an image to two sandbox accounts and watches it publish; approves a pending draft and requests
 * changes on another; creates and revokes a key; creates a webhook to a receiver on loopback and reads
 * its delivery log; approves a device login started by POST /auth/device; and is refused without the
 * CSRF token, from a foreign origin and once the session has ended. One browser for the file; every
 * page is saved as a screenshot under test-artifacts/dashboard/.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as Http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import type { Browser, BrowserContext, Page } from "playwright-core"
import * as Browsers from "../support/Browser.js"
import * as HeraldServer from "../support/HeraldServer.js"
import * as Fixtures from "../support/MediaFixtures.js"

// The callbacks given to `evaluate` run in the page; these are the few DOM names they use (the tests
// compile without the DOM library).
declare const document: {
  readonly activeElement: { readonly textContent: string | null; readonly id: string } | null
  readonly documentElement: { readonly scrollWidth: number }
}
declare class DataTransfer {
  readonly items: { add(file: File): void }
}
declare class DragEvent {
  constructor(type: string, init: { dataTransfer: DataTransfer; bubbles: boolean; cancelable: boolean })
}

/** How long a page may take to show what a test waits for (the machine is shared and slow at times). */
const eventually = { timeout: 15_000 }

const skip = Browsers.skipReason
if (skip !== undefined) console.warn(`[skip] dashboard browser tests: ${skip}`)

/** The viewer's zone: not the machine's (UTC), so that the pages' conversions show. */
const timezoneId = "Europe/Berlin"

interface Envelope<T> {
  readonly data: T
  readonly error: { readonly code: string; readonly message: string } | null
}

const json = <T>(res: HeraldServer.Response) => res.json as Envelope<T>

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

/** A webhook receiver on loopback that answers with a recognisable body. */
const startReceiver = async () => {
  const received: Array<{ readonly event: string; readonly test: boolean }> = []
  const server = Http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { event: string; data: { test?: boolean } }
      received.push({ event: body.event, test: body.data.test === true })
      res.writeHead(200, { "content-type": "text/plain" }).end("thanks from the loopback receiver")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as { port: number }).port
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    close: () => new Promise<void>((r) => server.close(() => r()))
  }
}

describe.skipIf(skip !== undefined)("the dashboard in Chromium", () => {
  let server: HeraldServer.HeraldServer
  let browser: Browser
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  let work: string
  const journal = () =>
    fs.existsSync(path.join(work, "sandbox.jsonl"))
      ? fs.readFileSync(path.join(work, "sandbox.jsonl"), "utf8").split("\n").filter((l) => l !== "")
        .map((l) => JSON.parse(l) as Record<string, unknown>)
      : []

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), "herald-dashboard-"))
    ;[server, browser, receiver] = await Promise.all([
      HeraldServer.start({
        args: ["--sandbox"],
        env: {
          HERALD_WEBHOOKS_ALLOW_PRIVATE: "true",
          // The test's own polls use the bootstrap key; the pages use the cookie (never limited).
          HERALD_RATE_LIMIT_PER_MINUTE: "100000",
          HERALD_RATE_LIMIT_PER_HOUR: "100000",
          // Every scenario signs in from 127.0.0.1: more than the default 10 a minute per address when
          // the machine is quick (the limit itself is tested in test/conformance/DashboardSession).
          HERALD_SIGN_IN_LIMIT_PER_MINUTE: "1000",
          HERALD_SANDBOX_JOURNAL: path.join(work, "sandbox.jsonl")
        }
      }),
      Browsers.launch(),
      startReceiver()
    ])
  }, 120_000)

  afterAll(async () => {
    await Promise.all([browser?.close(), server?.stop(), receiver?.close()])
    if (work !== undefined) fs.rmSync(work, { recursive: true, force: true })
  })

  const newPage = async (
    options: { readonly width?: number } = {}
  ): Promise<{ context: BrowserContext; page: Page; errors: Array<string> }> => {
    const context = await browser.newContext({
      baseURL: server.baseUrl,
      timezoneId,
      locale: "en-GB",
      viewport: { width: options.width ?? 1100, height: 900 }
    })
    const page = await context.newPage()
    return { context, page, errors: Browsers.watchErrors(page) }
  }

  /** The owner, whose password the first test sets from the first-start link. */
  const owner = { email: "", password: "correct horse battery staple 17" }

  it("sets the owner's password from the link printed on first start", async () => {
    // Printed just after the listening line.
    await expect.poll(() => server.output(), { timeout: 10_000 }).toContain("HERALD_OWNER_LINK=")
    const link = /HERALD_OWNER_LINK=(\S+)/.exec(server.output())![1]!
    owner.email = /the owner \(([^)\s]+)\)/.exec(server.output())![1]!
    expect(link).toMatch(/\/set-password\?token=/)
    const { context, page, errors } = await newPage()
    const url = new URL(link!)
    await page.goto(url.pathname + url.search)
    await page.getByLabel("New password").fill(owner.password)
    await page.getByLabel("Repeat the password").fill(owner.password)
    await Browsers.screenshot(page, "set-password")
    await page.getByRole("button", { name: "Set password" }).click()
    await expect.poll(() => page.locator(".notice").textContent(), eventually).toBe("Your password is set.")
    // The token is spent: the same link sets nothing again.
    await page.goto(url.pathname + url.search)
    await page.getByLabel("New password").fill("another password entirely")
    await page.getByLabel("Repeat the password").fill("another password entirely")
    await page.getByRole("button", { name: "Set password" }).click()
    await expect.poll(() => page.getByRole("alert").count(), eventually).toBe(1)
    expect(errors).toEqual([])
    await context.close()
    // The first page loads of the file and two password hashes: slow on a loaded machine.
  }, 90_000)

  /** Signs the owner in through the sign-in page; the page lands on the posts list. */
  const signIn = async (page: Page) => {
    await page.goto("/sign-in")
    await page.getByLabel("Email").fill(owner.email)
    await page.getByLabel("Password").fill(owner.password)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.waitForURL("**/posts")
  }

  /** The session cookie and CSRF token of a signed-in context, for requests from the test. */
  const sessionOf = async (context: BrowserContext) => {
    const cookie = (await context.cookies()).find((c) => c.name === "herald_session")
    expect(cookie, "herald_session cookie").toBeDefined()
    const res = await server.request("GET", "/dashboard/api/session", {
      key: null,
      headers: { cookie: `herald_session=${cookie!.value}` }
    })
    expect(res.status).toBe(200)
    return { cookie: `herald_session=${cookie!.value}`, csrf: (res.json as { csrf_token: string }).csrf_token }
  }

  it("signs in, and shows every page readable at 320 px without sideways scrolling", async () => {
    const { context, page, errors } = await newPage()
    await page.goto("/posts")
    await page.waitForURL("**/sign-in?next=%2Fposts")
    await Browsers.screenshot(page, "sign-in")
    await page.getByLabel("Email").fill(owner.email)
    await page.getByLabel("Password").fill("not the password")
    await page.getByRole("button", { name: "Sign in" }).click()
    await expect.poll(() => page.getByRole("alert").textContent(), eventually).toBeTruthy()
    expect(page.url()).toContain("/sign-in")
    await signIn(page)
    await expect.poll(() => page.locator("#who-email").textContent(), eventually).toContain(owner.email)
    // Keyboard, once the page has rendered its data: the first Tab reaches the skip link (rendering does
    // not take focus), and following it moves focus to the content.
    await page.locator("main h1", { hasText: "Posts" }).waitFor()
    await page.keyboard.press("Tab")
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content")
    await page.keyboard.press("Enter")
    await expect.poll(() => page.evaluate(() => document.activeElement?.id), eventually).toBe("main")
    await Browsers.screenshot(page, "posts")

    const narrow = await context.newPage()
    await narrow.setViewportSize({ width: 320, height: 800 })
    for (
      const p of [
        "/posts",
        "/calendar",
        "/compose",
        "/accounts",
        "/developer",
        "/approvals",
        "/device",
        "/queue",
        "/campaigns"
      ]
    ) {
      await narrow.goto(p)
      await narrow.locator("main h1").waitFor()
      await narrow.waitForLoadState("networkidle")
      const width = await narrow.evaluate(() => document.documentElement.scrollWidth)
      expect(width, `${p} at 320 px`).toBeLessThanOrEqual(320)
      await Browsers.screenshot(narrow, `320px${p.replaceAll("/", "-")}`)
    }
    expect(errors).toEqual([])
    await context.close()
    // Nine pages, each waited on until its network is idle: more than the default 30 s on a busy machine.
  }, 90_000)

  it(
    "a `next` that names another site is refused: sign-in and a signed-in visit land on this site's posts",
    async () => {
      const { context, page, errors } = await newPage()
      // Nothing may leave for evil.example: any request there fails at once instead of resolving.
      const left: Array<string> = []
      await context.route((url) => url.hostname.endsWith("evil.example"), (route) => {
        left.push(route.request().url())
        return route.abort()
      })
      await page.goto("/sign-in?next=/%5Cevil.example/")
      await page.getByLabel("Email").fill(owner.email)
      await page.getByLabel("Password").fill(owner.password)
      await page.getByRole("button", { name: "Sign in" }).click()
      await page.waitForURL(`${server.baseUrl}/posts`, eventually)
      // Signed in, the page goes on to `next` at once.
      for (const next of ["/%09/evil.example/", "/%5Cevil.example/", "//evil.example/", "/.//evil.example/"]) {
        await page.goto(`/sign-in?next=${next}`)
        await page.waitForURL(`${server.baseUrl}/posts`, eventually)
      }
      await page.goto("/sign-in?next=%2Fcompose")
      await page.waitForURL(`${server.baseUrl}/compose`, eventually)
      expect(left).toEqual([])
      expect(errors).toEqual([])
      await context.close()
    },
    120_000
  )

  it("composes and schedules a post with an image to two sandbox accounts, and watches it publish", async () => {
    const { context, page, errors } = await newPage()
    await signIn(page)
    await page.goto("/compose")
    await page.getByLabel("Sandbox x (x)").check()
    await page.getByLabel("Sandbox bluesky (bluesky)").check()
    await page.getByLabel("Text", { exact: true }).fill("Launch day from the dashboard 🚀")
    // Live counters, per platform, in each platform's unit.
    await expect.poll(() => page.locator("#counters li[data-platform=x]").textContent(), eventually).toMatch(
      /^x: \d+ \/ 280$/
    )
    await expect.poll(() => page.locator("#counters li[data-platform=bluesky]").textContent(), eventually).toBe(
      "bluesky: 31 / 300"
    )
    // Per-platform overrides and settings fold away under each targeted platform.
    await page.getByText("x: own text and settings").click()
    await page.getByLabel("Text for x (empty: the main text)").fill("x".repeat(281))
    await expect.poll(() => page.locator("#counters li[data-platform=x]").textContent(), eventually).toBe(
      "x: 281 / 280 (too long)"
    )
    await page.getByLabel("Text for x (empty: the main text)").fill("Launch day, the X cut")
    // Settings read as words, with the API's key beside them.
    await page.getByLabel("Reply settings", { exact: true }).selectOption("following")
    expect(await page.getByText("settings.replySettings").count()).toBe(1)
    // The image, dropped on the drop zone (a DataTransfer made in the page, as a drag from the desktop gives).
    const image = Fixtures.png(120, 80)
    await page.locator("#dropzone").evaluate((zone, bytes) => {
      const transfer = new DataTransfer()
      transfer.items.add(new File([new Uint8Array(bytes)], "launch.png", { type: "image/png" }))
      zone.dispatchEvent(new DragEvent("drop", { dataTransfer: transfer, bubbles: true, cancelable: true }))
    }, [...image])
    await expect.poll(() => page.locator(".media-list > li").first().textContent(), eventually).toContain("ready")
    expect(
      await page.locator(".media-list progress").first().evaluate((p) => (p as unknown as { value: number }).value)
    ).toBe(1)
    await expect.poll(() => page.locator(".renditions").first().textContent(), eventually).toMatch(
      /^x gets a re-encoded PNG without metadata/
    )
    await Browsers.screenshot(page, "compose")
    const at = new Date(Date.now() + 6_000)
    await page.getByLabel(/^Schedule for/).fill(localInput(at))
    await page.getByRole("button", { name: "Schedule", exact: true }).click()
    await page.waitForURL(/\/posts\/[0-9a-f-]{36}$/)
    const postId = page.url().split("/").pop()!
    const created = json<
      {
        scheduled_for: string
        timezone: string
        media_ids: ReadonlyArray<string>
        platform_content: Record<string, { content: string; settings?: Record<string, unknown> }>
      }
    >(
      await server.request("GET", `/api/v1/posts/${postId}`)
    ).data
    expect(Date.parse(created.scheduled_for)).toBe(Math.floor(at.getTime() / 1000) * 1000)
    expect(created.timezone).toBe(timezoneId)
    expect(created.platform_content.x?.content).toBe("Launch day, the X cut")
    expect(created.platform_content.x?.settings).toEqual({ replySettings: "following" })
    // The post's page refreshes itself until both destinations are published, with their links.
    await expect.poll(() => page.locator("#post-status").textContent(), { timeout: 60_000 }).toBe("published")
    await expect.poll(() => page.getByRole("link", { name: "Open post" }).count(), eventually).toBe(2)
    // The upload arrived whole, and both platforms were sent the image (or the rendition made for them).
    const mediaId = created.media_ids[0]!
    const stored =
      json<{ size: number; mime_type: string }>(await server.request("GET", `/api/v1/media/${mediaId}`)).data
    expect(stored).toMatchObject({ size: image.length, mime_type: "image/png" })
    const sent = journal().filter((line) =>
      line.outcome === "published" &&
      (line.media as ReadonlyArray<{ id: string; size: number }> | undefined)?.some((m) =>
        m.id === mediaId && m.size > 0
      )
    )
    expect(sent.map((line) => line.platform).sort()).toEqual(["bluesky", "x"])
    await Browsers.screenshot(page, "post")
    // The week calendar shows it at the viewer's wall clock, with the UTC instant on hover.
    await page.goto("/calendar")
    const entry = page.locator(`.week a[href="/posts/${postId}"]`).locator("xpath=..").locator("time")
    expect(await entry.getAttribute("title")).toBe(`UTC: ${new Date(created.scheduled_for).toISOString()}`)
    expect(await entry.textContent()).toBe(
      new Intl.DateTimeFormat("en-GB", { timeStyle: "short", timeZone: timezoneId }).format(
        new Date(created.scheduled_for)
      )
    )
    await Browsers.screenshot(page, "calendar")
    expect(errors).toEqual([])
    await context.close()
  }, 120_000)

  it("a failed destination shows its error, and Retry sends it again", async () => {
    const created = await server.request("POST", "/api/v1/posts", {
      body: { content: "rejected [sandbox:fail]", account_ids: [1] }
    })
    expect(created.status).toBe(201)
    const postId = json<{ id: string }>(created).data.id
    const { context, page, errors } = await newPage()
    await signIn(page)
    await page.goto(`/posts/${postId}`)
    await expect.poll(() => page.locator("#post-status").textContent(), eventually).toBe("failed")
    const row = page.locator("tbody tr").first()
    expect(await row.locator("td.error").textContent()).toContain("the platform rejected the post")
    await Browsers.screenshot(page, "post-failed")
    await row.getByRole("button", { name: "Retry" }).click()
    await expect.poll(() => page.locator("#flash").textContent(), eventually).toBe("Retrying 1 destination(s).")
    // Sent to the platform again (and, the marker being permanent, failed again): two sends in the journal.
    const destination =
      json<{ destinations: ReadonlyArray<{ id: string }> }>(await server.request("GET", `/api/v1/posts/${postId}`))
        .data.destinations[0]!.id
    await expect.poll(() => journal().filter((line) => line.destinationId === destination).length, {
      timeout: 30_000,
      interval: 250
    })
      .toBe(2)
    await expect.poll(() => page.locator("#post-status").textContent(), eventually).toBe("failed")
    expect(errors).toEqual([])
    await context.close()
  }, 60_000)

  it("lists accounts with their health, and disconnects one", async () => {
    const { context, page, errors } = await newPage()
    await signIn(page)
    await page.goto("/accounts")
    const discord = page.locator("tr", { hasText: "Sandbox discord" })
    await expect.poll(() => discord.locator(".status").textContent(), eventually).toBe("healthy")
    await Browsers.screenshot(page, "accounts")
    page.once("dialog", (d) => void d.accept())
    await discord.getByRole("button", { name: "Disconnect" }).click()
    await expect.poll(() => page.locator("tr", { hasText: "Sandbox discord" }).count(), eventually).toBe(0)
    const accounts =
      json<{ accounts: ReadonlyArray<{ platform: string }> }>(await server.request("GET", "/api/v1/accounts")).data
        .accounts
    expect(accounts.map((a) => a.platform)).not.toContain("discord")
    expect(errors).toEqual([])
    await context.close()
  })

  it("approves a pending draft and requests changes on another, with the pending badge", async () => {
    const draft = async (content: string) =>
      json<{ id: string }>(
        await server.request("POST", "/api/v1/posts", {
          body: { content, draft: true, request_approval: true, account_ids: [1] }
        })
      ).data.id
    const first = await draft("Please approve me")
    const second = await draft("Please fix me")
    const { context, page, errors } = await newPage()
    await signIn(page)
    await page.goto("/approvals")
    await expect.poll(() => page.locator("#approvals-badge").textContent(), eventually).toBe("2")
    await Browsers.screenshot(page, "approvals")
    const card = (text: string) => page.locator("article", { hasText: text })
    await card("Please approve me").getByRole("button", { name: "Approve" }).click()
    // The approved draft stays on its card with its publishing actions (approve, then publish).
    await expect.poll(() => card("Please approve me").getByRole("button", { name: "Publish now" }).count(), eventually)
      .toBe(1)
    await expect.poll(() => page.locator("#approvals-badge").textContent(), eventually).toBe("1")
    await card("Please fix me").getByLabel("What should change").fill("Add the launch link")
    await card("Please fix me").getByRole("button", { name: "Request changes" }).click()
    await expect.poll(() => card("Please fix me").count(), eventually).toBe(0)
    await expect.poll(() => page.locator("#approvals-badge").textContent(), eventually).toBe("")
    const a = json<{ approval_status: string }>(await server.request("GET", `/api/v1/posts/${first}`)).data
    const b =
      json<{ approval_status: string; approval_note: string }>(await server.request("GET", `/api/v1/posts/${second}`))
        .data
    expect(a.approval_status).toBe("approved")
    expect(b).toMatchObject({ approval_status: "changes_requested", approval_note: "Add the launch link" })
    // The posts list filters by approval.
    await page.goto("/posts?approval=changes_requested")
    await expect.poll(() => page.locator("tbody tr").count(), eventually).toBe(1)
    expect(await page.locator("tbody").textContent()).toContain("Please fix me")
    expect(errors).toEqual([])
    await context.close()
  })

  it("a member sees no approvals: no badge, no inbox, no review controls, and the API refuses (403 forbidden)", async () => {
    const created = await server.cli(["users", "create", "member@example.com", "--role", "member"])
    expect(created.code).toBe(0)
    const token = /set-password\?token=(\S+)/.exec(created.stdout)![1]!
    expect(
      (await server.request("POST", "/dashboard/api/password", {
        key: null,
        body: { token, password: owner.password }
      })).status
    ).toBe(204)
    const pending = json<{ id: string }>(
      await server.request("POST", "/api/v1/posts", {
        body: { content: "waiting for a reviewer", draft: true, request_approval: true, account_ids: [1] }
      })
    ).data.id
    const { context, page, errors } = await newPage()
    await page.goto("/sign-in")
    await page.getByLabel("Email").fill("member@example.com")
    await page.getByLabel("Password").fill(owner.password)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.waitForURL("**/posts")
    expect(await page.locator("#nav-approvals").isHidden()).toBe(true)
    await page.goto("/approvals")
    await expect.poll(() => page.locator("main .notice").textContent(), eventually).toBe(
      "Only owners and admins review posts."
    )
    await page.goto(`/posts/${pending}`)
    await expect.poll(() => page.locator("#post-approval").textContent(), eventually).toBe("pending")
    expect(await page.getByRole("button", { name: "Approve" }).count()).toBe(0)
    const { cookie, csrf } = await sessionOf(context)
    const refused = await server.request("POST", `/api/v1/posts/${pending}/approve`, {
      key: null,
      headers: { cookie, "x-csrf-token": csrf },
      body: {}
    })
    expect(refused.status).toBe(403)
    expect(json(refused).error?.code).toBe("insufficient_scope")
    expect(errors).toEqual([])
    await context.close()
  })

  it("creates a key shown once, which works until it is revoked", async () => {
    const { context, page, errors } = await newPage()
    await signIn(page)
    await page.goto("/developer")
    await page.getByLabel("Key name").fill("ci robot")
    await page.getByRole("button", { name: "Create key" }).click()
    const secret = (await page.locator("output[data-secret]").first().textContent())!
    expect(secret).toMatch(/^pe_live_[0-9a-f]{32}$/)
    expect((await server.request("GET", "/api/v1/me", { key: secret })).status).toBe(200)
    await Browsers.screenshot(page, "developer")
    page.once("dialog", (d) => void d.accept())
    await page.getByRole("button", { name: "Revoke ci robot" }).click()
    await expect.poll(() => page.locator("tr", { hasText: "ci robot" }).locator(".status").textContent(), eventually)
      .toBe("revoked")
    expect(await page.locator("output[data-secret]").count()).toBe(0)
    expect((await server.request("GET", "/api/v1/me", { key: secret })).status).toBe(401)
    expect(errors).toEqual([])
    await context.close()
  })

  it(
    "creates a webhook (secret shown once), sends a test and reads the receiver's answer in the delivery log",
    async () => {
      const { context, page, errors } = await newPage()
      await signIn(page)
      await page.goto("/developer")
      await page.getByLabel("Webhook URL").fill(receiver.url)
      await page.getByLabel("Webhook name").fill("loopback")
      await page.getByLabel("post.published").check()
      await page.getByRole("button", { name: "Create webhook" }).click()
      const secret = (await page.locator("output[data-secret]").first().textContent())!
      expect(secret).toMatch(/^whsec_.{64}$/)
      const hook = page.locator("article", { hasText: receiver.url })
      await hook.getByRole("button", { name: "Send test" }).click()
      await expect.poll(() => hook.locator(".notice").first().textContent(), eventually).toContain("Delivered")
      expect(receiver.received).toContainEqual(expect.objectContaining({ test: true }))
      // A real event: a post published now; its delivery, with the receiver's answer, reaches the log.
      const post = await server.request("POST", "/api/v1/posts", {
        body: { content: "for the webhook", account_ids: [1] }
      })
      expect(post.status).toBe(201)
      await expect.poll(async () => {
        await hook.getByRole("button", { name: "Delivery log" }).click()
        return hook.locator("table").textContent({ timeout: 1000 }).catch(() => "")
      }, { timeout: 30_000 }).toContain("thanks from the loopback receiver")
      expect(await hook.locator("table tbody tr").first().textContent()).toContain("post.published")
      expect(receiver.received).toContainEqual({ event: "post.published", test: false })
      await Browsers.screenshot(page, "developer-webhook")
      expect(errors).toEqual([])
      await context.close()
    },
    60_000
  )

  it("approves a device login started by POST /auth/device", async () => {
    const started = json<{ device_code: string; user_code: string; verification_uri_complete: string }>(
      await server.request("POST", "/api/v1/auth/device", { key: null, body: { client_name: "herald-cli on laptop" } })
    ).data
    const { context, page, errors } = await newPage()
    await signIn(page)
    await page.goto(
      new URL(started.verification_uri_complete).pathname + new URL(started.verification_uri_complete).search
    )
    await expect.poll(() => page.locator("#device-client").textContent(), eventually).toBe("herald-cli on laptop")
    await Browsers.screenshot(page, "device")
    await page.getByRole("button", { name: "Approve" }).click()
    await expect.poll(() => page.locator("#device-status").textContent(), eventually).not.toBe("pending")
    const token = json<{ status: string; api_key?: string }>(
      await server.request("POST", "/api/v1/auth/device/token", {
        key: null,
        body: { device_code: started.device_code }
      })
    ).data
    expect(token.status).toBe("authorized")
    expect((await server.request("GET", "/api/v1/me", { key: token.api_key! })).status).toBe(200)
    expect(errors).toEqual([])
    await context.close()
  })

  it("denies a device login: the device's poll reads denied and it never gets a key", async () => {
    const started = json<{ device_code: string; verification_uri_complete: string }>(
      await server.request("POST", "/api/v1/auth/device", { key: null, body: { client_name: "unknown tablet" } })
    ).data
    const { context, page, errors } = await newPage()
    await signIn(page)
    const link = new URL(started.verification_uri_complete)
    await page.goto(link.pathname + link.search)
    await expect.poll(() => page.locator("#device-client").textContent(), eventually).toBe("unknown tablet")
    await page.getByRole("button", { name: "Deny" }).click()
    await expect.poll(() => page.locator("#device-status").textContent(), eventually).toBe("denied")
    expect(await page.getByRole("button", { name: "Approve" }).count()).toBe(0)
    const poll = json<{ status: string; api_key?: string }>(
      await server.request("POST", "/api/v1/auth/device/token", {
        key: null,
        body: { device_code: started.device_code }
      })
    ).data
    expect(poll).toEqual({ status: "denied" })
    expect(errors).toEqual([])
    await context.close()
  })

  it("adds a post to the queue: it lands on the queue's next opening", async () => {
    const set = await server.cli([
      "queue",
      "set",
      "--org",
      server.orgId,
      "--timezone",
      "Asia/Tokyo",
      "--slots",
      "mon-sun 07:15"
    ])
    expect(set.code, set.stderr).toBe(0)
    const next =
      json<{ forecast: ReadonlyArray<{ scheduled_for: string }> }>(await server.request("GET", "/api/v1/queue?count=1"))
        .data.forecast[0]!.scheduled_for
    const { context, page, errors } = await newPage()
    await signIn(page)
    await page.goto("/compose")
    await page.getByLabel("Sandbox telegram (telegram)").check()
    await page.getByLabel("Text", { exact: true }).fill("Queued from the dashboard")
    await page.getByRole("button", { name: "Add to queue" }).click()
    await page.waitForURL(/\/posts\/[0-9a-f-]{36}$/)
    const post = json<{ status: string; scheduled_for: string }>(
      await server.request("GET", `/api/v1/posts/${page.url().split("/").pop()!}`)
    ).data
    expect(post).toMatchObject({ status: "scheduled", scheduled_for: next })
    expect(errors).toEqual([])
    await context.close()
  })

  it("files a post under a campaign from the composer, and the posts list filters by that campaign", async () => {
    const campaign = json<{ id: number }>(
      await server.request("POST", "/api/v1/campaigns", { body: { name: "Autumn launch" } })
    ).data
    const { context, page, errors } = await newPage()
    await signIn(page)
    await page.goto("/compose")
    // (discord was disconnected by the accounts scenario above)
    await page.getByLabel("Sandbox linkedin (linkedin)").check()
    await page.getByLabel("Text", { exact: true }).fill("Part of the autumn launch")
    await page.getByLabel("Campaign").selectOption({ label: "Autumn launch" })
    await page.getByRole("button", { name: "Save draft" }).click()
    await page.waitForURL(/\/posts\/[0-9a-f-]{36}$/)
    const postId = page.url().split("/").pop()!
    expect(
      json<{ campaign_id: number | null }>(await server.request("GET", `/api/v1/posts/${postId}`)).data.campaign_id
    )
      .toBe(campaign.id)
    await page.goto("/posts")
    await page.getByLabel("Campaign").selectOption({ label: "Autumn launch" })
    await page.getByRole("button", { name: "Apply" }).click()
    await page.waitForURL(new RegExp(`/posts\\?.*campaign_id=${campaign.id}(&|$)`))
    await expect.poll(() => page.locator("main tbody tr").count(), eventually).toBe(1)
    expect(await page.locator("main tbody a").getAttribute("href")).toBe(`/posts/${postId}`)
    expect(errors).toEqual([])
    await context.close()
  })

  it("a cookie request to /api/v1/posts works with implicit scopes and no API-key rate-limit headers", async () => {
    const { context, page } = await newPage()
    await signIn(page)
    const { cookie, csrf } = await sessionOf(context)
    const read = await server.request("GET", "/api/v1/posts", { key: null, headers: { cookie } })
    expect(read.status).toBe(200)
    for (const h of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"]) {
      expect(read.headers.get(h), h).toBeNull()
    }
    const write = await server.request("POST", "/api/v1/posts", {
      key: null,
      headers: { cookie, "x-csrf-token": csrf, origin: server.baseUrl },
      body: { content: "written with the cookie", draft: true }
    })
    expect(write.status).toBe(201)
    for (const h of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"]) {
      expect(write.headers.get(h), h).toBeNull()
    }
    await context.close()
  })

  it("refuses cookie writes without the CSRF token or from another origin (403 csrf_failed), and stores nothing", async () => {
    const { context, page } = await newPage()
    await signIn(page)
    const { cookie, csrf } = await sessionOf(context)
    const before =
      json<{ pagination: { total: number } }>(await server.request("GET", "/api/v1/posts?limit=1")).data.pagination
        .total
    const attempts = [
      { cookie },
      { cookie, "x-csrf-token": "not-the-token" },
      { cookie, "x-csrf-token": csrf, origin: "http://evil.example" }
    ]
    for (const headers of attempts) {
      const res = await server.request("POST", "/api/v1/posts", {
        key: null,
        headers,
        body: { content: "forged", draft: true }
      })
      expect(res.status, JSON.stringify(headers)).toBe(403)
      expect(json(res).error?.code).toBe("csrf_failed")
    }
    const keys = await server.request("POST", "/dashboard/api/keys", {
      key: null,
      headers: { cookie },
      body: { name: "forged", scopes: ["read"] }
    })
    expect(keys.status).toBe(403)
    expect(json(keys).error?.code).toBe("csrf_failed")
    // The page itself, from the browser, sends a form's fetch with the token: a forged one without it fails.
    const forged = await page.evaluate(async () =>
      (await fetch("/api/v1/posts", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ content: "forged from the page", draft: true })
      })).status
    )
    expect(forged).toBe(403)
    const after =
      json<{ pagination: { total: number } }>(await server.request("GET", "/api/v1/posts?limit=1")).data.pagination
        .total
    expect(after).toBe(before)
    await context.close()
  })

  it("a session ended elsewhere is refused: the open tab goes to sign-in and says why", async () => {
    const { context, page, errors } = await newPage()
    await signIn(page)
    const { cookie } = await sessionOf(context)
    await page.goto("/compose")
    await page.locator("main h1").waitFor()
    // "Sign out everywhere" from a second browser.
    const other = await newPage()
    await signIn(other.page)
    await other.page.goto("/developer")
    await other.page.getByRole("button", { name: "Sign out everywhere" }).click()
    await other.page.waitForURL("**/sign-in?reason=signed-out")
    expect((await server.request("GET", "/api/v1/posts", { key: null, headers: { cookie } })).status).toBe(401)
    // The first tab, back in front, checks its session and leaves for sign-in, keeping where it was.
    await page.evaluate("document.dispatchEvent(new Event('visibilitychange'))")
    await page.waitForURL(/\/sign-in\?next=%2Fcompose&reason=expired$/)
    await expect.poll(() => page.locator("main .notice").textContent(), eventually).toBe(
      "Your session has ended. Sign in again to continue."
    )
    await Browsers.screenshot(page, "sign-in-expired")
    // Signing in again returns to the page it left.
    await page.getByLabel("Email").fill(owner.email)
    await page.getByLabel("Password").fill(owner.password)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.waitForURL("**/compose")
    expect(errors).toEqual([])
    await context.close()
    await other.context.close()
  })

  it("an idle session expires: the server refuses it (401) and the page's write is not stored", async () => {
    const idle = await HeraldServer.start({ args: ["--sandbox"], env: { HERALD_SESSION_IDLE_SECONDS: "2" } })
    try {
      await expect.poll(() => idle.output(), { timeout: 10_000 }).toContain("HERALD_OWNER_LINK=")
      const token = /HERALD_OWNER_LINK=\S+\?token=(\S+)/.exec(idle.output())![1]!
      const email = /the owner \(([^)\s]+)\)/.exec(idle.output())![1]!
      const set = await idle.request("POST", "/dashboard/api/password", {
        key: null,
        body: { token, password: owner.password }
      })
      expect(set.status).toBe(204)
      const context = await browser.newContext({ baseURL: idle.baseUrl, timezoneId })
      const page = await context.newPage()
      const errors = Browsers.watchErrors(page)
      await page.goto("/sign-in?next=%2Fcompose")
      await page.getByLabel("Email").fill(email)
      await page.getByLabel("Password").fill(owner.password)
      await page.getByRole("button", { name: "Sign in" }).click()
      await page.waitForURL("**/compose")
      await page.getByLabel("Sandbox x (x)").check()
      await page.getByLabel("Text", { exact: true }).fill("written after the session went idle")
      const cookie = (await context.cookies()).find((c) => c.name === "herald_session")!
      await new Promise((r) => setTimeout(r, 3_000))
      expect(
        (await idle.request("GET", "/dashboard/api/session", {
          key: null,
          headers: { cookie: `herald_session=${cookie.value}` }
        })).status
      )
        .toBe(401)
      await page.getByRole("button", { name: "Save draft" }).click()
      await page.waitForURL(/\/sign-in\?next=%2Fcompose&reason=expired$/)
      const posts = json<{ pagination: { total: number } }>(await idle.request("GET", "/api/v1/posts?limit=1")).data
      expect(posts.pagination.total).toBe(0)
      expect(errors).toEqual([])
      await context.close()
    } finally {
      await idle.stop()
    }
  }, 90_000)
})
