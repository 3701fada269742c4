/**
 * The team and its notifications in Debian's Chromium against `herald serve --sandbox`, at 375 px in
 * Europe/Berlin, with a real SMTP server (`smtp-server`) listening in the test for the notification
 * e-mails: the owner invites a member by link, the member joins and signs in, the owner changes the
 * role and removes them (their session ends); a member submits a draft for approval, the owner sees a
 * notification (and its badge) and gets an e-mail, approves, and the author is notified in the app and
 * by e-mail; the two talk in the post's comments. Screenshots of the new pages go to
 * test-artifacts/dashboard/.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Admin from "@herald/http/Admin"
import { simpleParser } from "mailparser"
import type { AddressInfo } from "node:net"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { SMTPServer } from "smtp-server"
import * as Browsers from "../support/Browser.js"
import * as HeraldServer from "../support/HeraldServer.js"

declare const document: { readonly documentElement: { readonly scrollWidth: number } }

const eventually = { timeout: 20_000 }
const timezoneId = "Europe/Berlin"
const viewport = { width: 375, height: 800 }

const skip = Browsers.skipReason
if (skip !== undefined) console.warn(`[skip] team browser tests: ${skip}`)

interface Mail {
  readonly to: string
  readonly from: string
  readonly subject: string
  readonly text: string
}

describe.skipIf(skip !== undefined)("team, invitations and notifications in the dashboard (Chromium, 375 px)", () => {
  let server: HeraldServer.HeraldServer
  let browser: Browser
  let owner: BrowserContext
  let smtp: SMTPServer
  const mails: Array<Mail> = []
  let ownerEmail = ""
  const password = "correct horse battery staple 35"

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS"],
      logger: false,
      onData: (stream, session, callback) => {
        simpleParser(stream).then((parsed) => {
          for (const to of session.envelope.rcptTo) {
            mails.push({
              to: to.address,
              from: parsed.from?.value[0]?.address ?? "",
              subject: parsed.subject ?? "",
              text: parsed.text ?? ""
            })
          }
          callback()
        }, callback)
      }
    })
    await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve))
    const smtpPort = (smtp.server.address() as AddressInfo).port
    ;[server, browser] = await Promise.all([
      HeraldServer.start({
        args: ["--sandbox"],
        env: {
          HERALD_SIGN_IN_LIMIT_PER_MINUTE: "1000",
          HERALD_SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
          HERALD_MAIL_FROM: "Herald <herald@example.test>"
        }
      }),
      Browsers.launch()
    ])
    ownerEmail = await Browsers.setOwnerPassword(server, password)
    await server.withStore(Admin.setPlan(server.orgId, "scale"))
    owner = await browser.newContext({ baseURL: server.baseUrl, timezoneId, locale: "en-GB", viewport })
    await Browsers.signInto(owner, server, { email: ownerEmail, password })
  }, 120_000)

  afterAll(async () => {
    await owner?.close()
    await Promise.all([
      browser?.close(),
      server?.stop(),
      new Promise<void>((resolve) => smtp ? smtp.close(() => resolve()) : resolve())
    ])
  })

  const open = async (
    context: BrowserContext,
    path: string,
    heading: string
  ): Promise<{ page: Page; errors: Array<string> }> => {
    const page = await context.newPage()
    const errors = Browsers.watchErrors(page)
    await page.goto(path)
    await page.locator("main h1", { hasText: heading }).waitFor(eventually)
    return { page, errors }
  }

  const fits = async (page: Page) => {
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375)
  }

  const mailTo = (to: string, subjectStart: string) =>
    expect.poll(() => mails.find((m) => m.to === to && m.subject.startsWith(subjectStart)), eventually).toBeDefined()

  it(
    "the owner invites a member by link; the member joins and signs in; the owner changes the role and removes them",
    async () => {
      const { page, errors } = await open(owner, "/team", "Team")
      await page.getByLabel("Email of the person to invite").fill("mia@example.com")
      await page.getByLabel("Role", { exact: true }).selectOption("member")
      await page.getByRole("button", { name: "Create invitation link" }).click()
      const link = page.getByLabel("Invitation link")
      await link.waitFor(eventually)
      const url = await link.inputValue()
      expect(url).toMatch(new RegExp(`^${server.baseUrl}/join\\?token=[0-9a-f]{64}$`))
      expect(await page.locator("p.notice.ok").textContent()).toMatch(
        /^Invitation for mia@example\.com as Member\. Send them this link; it works once, until \d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2}\. It is not shown again\.$/
      )
      await page.locator("tr[data-invitation=\"mia@example.com\"]").waitFor(eventually)
      await fits(page)
      await Browsers.screenshot(page, "team")

      // The invitee, in a browser of their own.
      const invitee = await browser.newContext({ baseURL: server.baseUrl, timezoneId, locale: "en-GB", viewport })
      const join = await invitee.newPage()
      const joinErrors = Browsers.watchErrors(join)
      await join.goto(url)
      await join.locator("main h1", { hasText: "Join" }).waitFor(eventually)
      expect(await join.locator("main").textContent()).toContain("mia@example.com")
      await fits(join)
      await Browsers.screenshot(join, "join")
      await join.getByLabel("Your name").fill("Mia Member")
      await join.getByLabel("Choose a password").fill("mia's password 123")
      await join.getByLabel("Repeat the password").fill("mia's password 123")
      await join.getByRole("button", { name: "Join" }).click()
      await join.waitForURL(/\/posts$/, eventually)
      await expect.poll(() => join.locator("#who-email").textContent(), eventually).toBe("mia@example.com (member)")
      // Signed out, the member signs in again with the password they chose.
      await join.getByRole("button", { name: "Sign out" }).click()
      await join.waitForURL(/\/sign-in/, eventually)
      await join.getByLabel("Email").fill("mia@example.com")
      await join.getByLabel("Password").fill("mia's password 123")
      await join.getByRole("button", { name: "Sign in" }).click()
      await expect.poll(() => join.locator("#who-email").textContent(), eventually).toBe("mia@example.com (member)")
      // The used link is refused.
      const reused = await invitee.newPage()
      await reused.goto(url)
      await expect.poll(() => reused.locator("main").textContent(), eventually).toContain(
        "unknown, used, withdrawn or expired"
      )

      // The owner makes Mia an admin, then removes her.
      await page.reload()
      await page.locator("tr[data-user=\"mia@example.com\"]").waitFor(eventually)
      expect(await page.locator("tr[data-invitation=\"mia@example.com\"]").count()).toBe(0)
      await page.getByLabel("Role of Mia Member").selectOption("admin")
      await expect.poll(() => page.locator("#flash").textContent(), eventually).toBe("Mia Member is now admin.")
      const users = await server.request("GET", "/dashboard/api/users", {
        key: null,
        headers: { cookie: (await owner.cookies()).map((c) => `${c.name}=${c.value}`).join("; ") }
      })
      expect(
        (users.json as { data: ReadonlyArray<{ email: string; role: string }> }).data.find((u) =>
          u.email === "mia@example.com"
        )?.role
      ).toBe("admin")
      await page.getByRole("button", { name: "Remove Mia Member" }).click()
      await page.getByRole("dialog").getByRole("button", { name: "Remove" }).click()
      await expect.poll(() => page.locator("#flash").textContent(), eventually).toBe("Removed Mia Member.")
      await expect.poll(() => page.locator("tr[data-user=\"mia@example.com\"]").count(), eventually).toBe(0)
      // Her session has ended: the next page she opens sends her to sign in.
      await join.goto("/posts")
      await join.waitForURL(/\/sign-in/, eventually)
      expect([...errors, ...joinErrors]).toEqual([])
      await invitee.close()
    },
    120_000
  )

  it(
    "a draft submitted for approval notifies the owner in the app and by e-mail; approving it notifies the author",
    async () => {
      // Sam joins as a member through an invitation (over HTTP) and signs in in a browser of his own.
      const ownerCookie = (await owner.cookies()).map((c) => `${c.name}=${c.value}`).join("; ")
      const ownerSession = await server.request("GET", "/dashboard/api/session", {
        key: null,
        headers: { cookie: ownerCookie }
      })
      const ownerCsrf = (ownerSession.json as { csrf_token: string }).csrf_token
      const ownerName = (ownerSession.json as { user: { name: string } }).user.name
      const invited = await server.request("POST", "/dashboard/api/invitations", {
        key: null,
        body: { email: "sam@example.com", role: "member" },
        headers: { cookie: ownerCookie, "x-csrf-token": ownerCsrf }
      })
      expect(invited.status, invited.text).toBe(201)
      const token = (invited.json as { path: string }).path.split("token=")[1]
      const joined = await server.request("POST", "/dashboard/api/invitations/accept", {
        key: null,
        body: { token, name: "Sam Writer", password: "sam's password 123" }
      })
      expect(joined.status, joined.text).toBe(201)
      const author = await browser.newContext({ baseURL: server.baseUrl, timezoneId, locale: "en-GB", viewport })
      const sam = await Browsers.signInto(author, server, { email: "sam@example.com", password: "sam's password 123" })

      const accounts = await server.request("GET", "/api/v1/accounts", {
        key: null,
        headers: { cookie: `herald_session=${sam.cookie}` }
      })
      const accountId =
        (accounts.json as { data: { accounts: ReadonlyArray<{ id: number; platform: string }> } }).data.accounts
          .find((a) => a.platform === "bluesky")!.id
      const submitted = await server.request("POST", "/api/v1/posts", {
        key: null,
        body: { content: "Autumn sale starts Friday", account_ids: [accountId], draft: true, request_approval: true },
        headers: { cookie: `herald_session=${sam.cookie}`, "x-csrf-token": sam.csrf }
      })
      expect(submitted.status, submitted.text).toBe(201)
      const postId = (submitted.json as { data: { id: string } }).data.id

      // The owner: a badge in the navigation, the notification on its page, and an e-mail.
      const { page, errors } = await open(owner, "/notifications", "Notifications")
      await expect.poll(() => page.locator("#notifications-badge").textContent(), eventually).toBe("1")
      const item = page.locator("li.notification[data-kind=\"approval_requested\"]")
      await item.waitFor(eventually)
      expect(await item.getByRole("link").textContent()).toBe("Approval requested: “Autumn sale starts Friday”")
      expect(await item.getByRole("link").getAttribute("href")).toBe(`/posts/${postId}`)
      expect(await item.locator("p.muted").textContent()).toMatch(
        /^Approval requested · \d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2} · unread$/
      )
      await fits(page)
      await Browsers.screenshot(page, "notifications")
      await mailTo(ownerEmail, "Approval requested")
      const toOwner = mails.find((m) => m.to === ownerEmail && m.subject.startsWith("Approval requested"))!
      expect(toOwner.subject).toBe("Approval requested: “Autumn sale starts Friday”")
      expect(toOwner.from).toBe("herald@example.test")
      expect(toOwner.text).toContain("A draft waits for your review: “Autumn sale starts Friday”")
      // The author asked for the review: no notification and no e-mail of it to them.
      // (Sam's only e-mail so far is the invitation: SMTP is configured, so inviting e-mails the link.)
      expect(mails.filter((m) => m.to === "sam@example.com").map((m) => m.subject)).toEqual([
        "Owner invites you to Default organization on Herald"
      ])

      // The owner opens the draft from the notification, leaves a comment for the author, and approves it.
      await item.getByRole("link").click()
      await page.waitForURL(new RegExp(`/posts/${postId}$`), eventually)
      await page.getByLabel("Your comment").fill("Looks good; add the store link next time.")
      await page.getByRole("button", { name: "Add comment" }).click()
      await expect.poll(() => page.locator("#comments li.comment").count(), eventually).toBe(1)
      await page.getByRole("button", { name: "Approve" }).click()
      await expect.poll(() => page.locator("#flash").textContent(), eventually).toContain("Approved")

      // The author is notified in the app and by e-mail, and marks it read.
      const authorPage = await author.newPage()
      const authorErrors = Browsers.watchErrors(authorPage)
      await authorPage.goto("/notifications")
      // Two unread: the owner's comment and the approval.
      await expect.poll(() => authorPage.locator("#notifications-badge").textContent(), eventually).toBe("2")
      expect(await authorPage.locator("li.notification[data-kind=\"comment\"]").getByRole("link").textContent())
        .toBe(`${ownerName} commented on “Autumn sale starts Friday”`)
      const approved = authorPage.locator("li.notification[data-kind=\"approved\"]")
      await approved.waitFor(eventually)
      expect(await approved.getByRole("link").textContent()).toBe("Approved: “Autumn sale starts Friday”")
      await mailTo("sam@example.com", "Approved")
      const toAuthor = mails.find((m) => m.to === "sam@example.com" && m.subject.startsWith("Approved"))!
      // The owner's comment reached the author by e-mail too.
      expect(mails.filter((m) => m.to === "sam@example.com").map((m) => m.subject)).toContain(
        `${ownerName} commented on “Autumn sale starts Friday”`
      )
      expect(toAuthor.subject).toBe("Approved: “Autumn sale starts Friday”")
      expect(toAuthor.text).toContain("Your draft “Autumn sale starts Friday” was approved")
      await approved.getByRole("button", { name: /^Mark read/ }).click()
      await expect.poll(() => authorPage.locator("#unread-count").textContent(), eventually).toBe("1 unread.")
      await expect.poll(() => authorPage.locator("#notifications-badge").textContent(), eventually).toBe("1")
      await fits(authorPage)

      // The author reads the comment on the post's page and answers it.
      await authorPage.goto(`/posts/${postId}`)
      await expect.poll(() => authorPage.locator("#comments").textContent(), eventually).toContain(
        "Looks good; add the store link next time."
      )
      await authorPage.getByLabel("Your comment").fill("Will do, thanks!")
      await authorPage.getByRole("button", { name: "Add comment" }).click()
      await expect.poll(() => authorPage.locator("#comments li.comment").count(), eventually).toBe(2)
      // Each comment names its writer and when, as a time (the viewer's zone).
      expect(await authorPage.locator("#comments li.comment").first().locator("p.muted").textContent()).toMatch(
        new RegExp(`^${ownerName} · \\d{1,2} [A-Z][a-z]{2} \\d{4}, \\d{2}:\\d{2}$`)
      )
      await fits(authorPage)
      await Browsers.screenshot(authorPage, "post-comments")

      // The owner marks everything read (the author's answer among them).
      await page.goto("/notifications")
      await page.getByRole("button", { name: "Mark all read" }).click()
      await expect.poll(() => page.locator("#notifications-badge").textContent(), eventually).toBe("")
      expect([...errors, ...authorErrors]).toEqual([])
      await author.close()
    },
    120_000
  )
})
