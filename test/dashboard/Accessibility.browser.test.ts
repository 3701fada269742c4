/**
 * Every dashboard page scanned by axe-core in Debian's Chromium (no critical or serious violation),
 * at desktop width and at 375 px, in Europe/Berlin, with data on the pages (a scheduled post, a failed
 * one, a draft waiting for approval, a queue, a campaign, an invitation); a full-page screenshot of
 * each lands in test-artifacts/dashboard/ (named a11y-<page> and 375px-a11y-<page>). Each width's test
 * scans every page before failing, so its message lists all violations at once.
 */
import * as QueuesUseCase from "@herald/core/workflow/Queues"
import { OrganizationId } from "@herald/core/kernel/Ids"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { Browser, BrowserContext } from "playwright-core"
import * as Axe from "../support/Axe.js"
import * as Browsers from "../support/Browser.js"
import * as HeraldServer from "../support/HeraldServer.js"

const eventually = { timeout: 15_000 }
const timezoneId = "Europe/Berlin"

const skip = Browsers.skipReason
if (skip !== undefined) console.warn(`[skip] dashboard accessibility browser tests: ${skip}`)

describe.skipIf(skip !== undefined)("accessibility of every dashboard page (axe-core, Chromium)", () => {
  let server: HeraldServer.HeraldServer
  let browser: Browser
  let credentials: { email: string; password: string }
  /** Pages seen signed out: the owner's password link (unused) and an invitation link. */
  let ownerLink = ""
  let joinPath = ""
  let scheduled = ""
  let failed = ""

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await server.request(method, `/api/v1${path}`, body === undefined ? {} : { body })
    expect(res.status, res.text).toBeLessThan(300)
    return (res.json as { data: Record<string, unknown> }).data
  }

  beforeAll(async () => {
    ;[server, browser] = await Promise.all([HeraldServer.start({ args: ["--sandbox"] }), Browsers.launch()])
    for (let i = 0; i < 200 && !/HERALD_OWNER_LINK=\S+token=[0-9a-f]{64}/.test(server.output()); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const link = new URL(/HERALD_OWNER_LINK=(\S+)/.exec(server.output())![1]!)
    ownerLink = link.pathname + link.search
    credentials = { email: "", password: "correct horse battery staple a11y" }
    for (const width of [1280, 375]) {
      const problems: Array<string> = []
      const context = await contextOf(width)
      await scan(context, "set-password", ownerLink, problems)
      await context.close()
      setPasswordProblems.set(width, problems)
    }
    await prepare()
  }, 180_000)

  afterAll(async () => {
    await Promise.all([browser?.close(), server?.stop()])
  })

  const pages = () =>
    [
      ["posts", "/posts"],
      ["post-scheduled", `/posts/${scheduled}`],
      ["post-failed", `/posts/${failed}`],
      ["calendar-week", "/calendar"],
      ["calendar-month", "/calendar?view=month"],
      ["calendar-hours", "/calendar?view=hours"],
      ["compose", "/compose"],
      ["compose-edit", `/compose?post=${scheduled}`],
      ["approvals", "/approvals"],
      ["accounts", "/accounts"],
      ["media", "/media"],
      ["queue", "/queue"],
      ["campaigns", "/campaigns"],
      ["analytics", "/analytics"],
      ["bulk", "/bulk"],
      ["team", "/team"],
      ["notifications", "/notifications"],
      ["developer", "/developer"],
      ["device", "/device"],
      ["device-unknown-code", "/device?code=BCDF-GHJK"]
    ] as const

  /** Scans the page at `path` in `context`; its problems are added to `problems`. */
  const scan = async (context: BrowserContext, name: string, path: string, problems: Array<string>) => {
    const page = await context.newPage()
    const errors = Browsers.watchErrors(page)
    await page.goto(path)
    await page.locator("main h1").waitFor(eventually)
    await page.waitForLoadState("networkidle")
    await page.locator("main:not([aria-busy])").waitFor(eventually)
    const width = page.viewportSize()!.width
    const found = await Axe.violations(page)
    if (found.length > 0) problems.push(`${name} (${path}) at ${width} px:\n${Axe.describe(found)}`)
    if (errors.length > 0) problems.push(`${name}: script errors ${errors.join("; ")}`)
    await Browsers.screenshot(page, `${width === 375 ? "375px-" : ""}a11y-${name}`)
    await page.close()
  }
  const contextOf = (width: number) =>
    browser.newContext({ baseURL: server.baseUrl, timezoneId, locale: "en-GB", viewport: { width, height: 900 } })

  /** The problems found on the owner's set-password page (its link works once), by width. */
  const setPasswordProblems = new Map<number, Array<string>>()

  const scanAll = async (width: number): Promise<Array<string>> => {
    const problems = [...(setPasswordProblems.get(width) ?? [])]
    const signedOut = await contextOf(width)
    await scan(signedOut, "sign-in", "/sign-in", problems)
    await scan(signedOut, "join", joinPath, problems)
    await scan(signedOut, "join-no-token", "/join", problems)
    await scan(signedOut, "set-password-used-link", ownerLink, problems)
    await signedOut.close()
    const context = await contextOf(width)
    await Browsers.signInto(context, server, credentials)
    for (const [name, path] of pages()) await scan(context, name, path, problems)
    await context.close()
    return problems
  }

  /** The owner's password, and something on each page. */
  const prepare = async () => {
    credentials.email = await Browsers.setOwnerPassword(server, credentials.password)
    const accounts = (await api("GET", "/accounts")).accounts as ReadonlyArray<{ id: number; platform: string }>
    const id = (platform: string) => accounts.find((a) => a.platform === platform)!.id
    scheduled = (await api("POST", "/posts", {
      content: "Spring menu tasting on Friday",
      account_ids: [id("x"), id("telegram")],
      scheduled_for: new Date(Date.now() + 26 * 3_600_000).toISOString()
    })).id as string
    failed = (await api("POST", "/posts", { content: "Opening hours [sandbox:fail]", account_ids: [id("telegram")] }))
      .id as string
    await api("POST", "/posts", {
      content: "Draft for review",
      account_ids: [id("telegram")],
      draft: true,
      request_approval: true
    })
    await api("POST", "/campaigns", { name: "Autumn launch" })
    await server.withStore(QueuesUseCase.setQueue({
      organizationId: OrganizationId.make(server.orgId),
      timezone: "America/New_York",
      openings: "mon-fri 09:00,15:30"
    }))
    const session = await browser.newContext({ baseURL: server.baseUrl })
    const { cookie, csrf } = await Browsers.signInto(session, server, credentials)
    await session.close()
    const invited = await server.request("POST", "/dashboard/api/invitations", {
      key: null,
      body: { email: "mia@example.com", role: "member" },
      headers: { cookie: `herald_session=${cookie}`, "x-csrf-token": csrf }
    })
    expect(invited.status, invited.text).toBe(201)
    joinPath = (invited.json as { path: string }).path
  }

  it("desktop width: no critical or serious violation on any page", async () => {
    expect(await scanAll(1280)).toEqual([])
  }, 240_000)

  it("375 px: no critical or serious violation on any page", async () => {
    expect(await scanAll(375)).toEqual([])
  }, 240_000)
})
