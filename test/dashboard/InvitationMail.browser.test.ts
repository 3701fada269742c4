/**
 * Invitation e-mails against a real SMTP server (`smtp-server`, listening in the test): with SMTP
 * configured, an owner who invites someone on the Team page (Chromium, 375 px, Europe/Berlin) has the
 * link e-mailed to them; the e-mail names the organization and the role, and its link, opened in the
 * invitee's own browser, joins the organization. A recipient the mail server refuses leaves the
 * invitation in place and the page says the e-mail was not sent.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Admin from "@herald/http/Admin"
import { simpleParser } from "mailparser"
import type { AddressInfo } from "node:net"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { SMTPServer } from "smtp-server"
import * as Axe from "../support/Axe.js"
import * as Browsers from "../support/Browser.js"
import * as HeraldServer from "../support/HeraldServer.js"

const eventually = { timeout: 20_000 }
const timezoneId = "Europe/Berlin"
const viewport = { width: 375, height: 800 }

const skip = Browsers.skipReason
if (skip !== undefined) console.warn(`[skip] invitation e-mail browser tests: ${skip}`)

interface Mail {
  readonly to: string
  readonly from: string
  readonly subject: string
  readonly text: string
}

describe.skipIf(skip !== undefined)("invitation e-mails (SMTP, Chromium)", () => {
  let server: HeraldServer.HeraldServer
  let browser: Browser
  let owner: BrowserContext
  let smtp: SMTPServer
  const mails: Array<Mail> = []
  const password = "correct horse battery staple invite"

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS"],
      logger: false,
      // A mailbox that does not exist, refused for good.
      onRcptTo: (address, _session, callback) =>
        address.address === "nobody@example.com"
          ? callback(Object.assign(new Error("5.1.1 No such user"), { responseCode: 550 }))
          : callback(),
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
    const email = await Browsers.setOwnerPassword(server, password)
    await server.withStore(Admin.setPlan(server.orgId, "scale"))
    owner = await browser.newContext({ baseURL: server.baseUrl, timezoneId, locale: "en-GB", viewport })
    await Browsers.signInto(owner, server, { email, password })
  }, 120_000)

  afterAll(async () => {
    await owner?.close()
    await Promise.all([
      browser?.close(),
      server?.stop(),
      new Promise<void>((resolve) => smtp ? smtp.close(() => resolve()) : resolve())
    ])
  })

  const invite = async (page: Page, email: string, role: string) => {
    await page.getByLabel("Email of the person to invite").fill(email)
    await page.getByLabel("Role", { exact: true }).selectOption(role)
    await page.getByRole("button", { name: "Create invitation link" }).click()
    await page.getByLabel("Invitation link").waitFor(eventually)
    return page.getByLabel("Invitation link").inputValue()
  }

  it("e-mails the invitation link to the invitee; the link in the e-mail joins the organization", async () => {
    const page = await owner.newPage()
    const errors = Browsers.watchErrors(page)
    await page.goto("/team")
    await page.locator("main h1", { hasText: "Team" }).waitFor(eventually)
    const shown = await invite(page, "noa@example.com", "admin")
    expect(await page.locator("#invitation-mail").textContent()).toBe(
      "The link was also e-mailed to noa@example.com."
    )
    await Axe.check(page, "the team page after an e-mailed invitation")
    await Browsers.screenshot(page, "375px-team-invitation-emailed")

    await expect.poll(() => mails.find((m) => m.to === "noa@example.com"), eventually).toBeDefined()
    const mail = mails.find((m) => m.to === "noa@example.com")!
    expect(mail.from).toBe("herald@example.test")
    expect(mail.subject).toBe("Owner invites you to Default organization on Herald")
    expect(mail.text).toContain("join Default organization on Herald as an admin")
    const link = /(http\S+\/join\?token=[0-9a-f]{64})/.exec(mail.text)?.[1]
    // The link is the dashboard's, at the origin the owner uses, and the one the page shows.
    expect(link).toBe(shown)
    expect(link!.startsWith(`${server.baseUrl}/join?token=`)).toBe(true)

    const invitee = await browser.newContext({ baseURL: server.baseUrl, timezoneId, locale: "en-GB", viewport })
    const join = await invitee.newPage()
    const joinErrors = Browsers.watchErrors(join)
    await join.goto(link!)
    await join.locator("main h1", { hasText: "Join" }).waitFor(eventually)
    await join.getByLabel("Your name").fill("Noa Admin")
    await join.getByLabel("Choose a password").fill("noa's password 123")
    await join.getByLabel("Repeat the password").fill("noa's password 123")
    await join.getByRole("button", { name: "Join" }).click()
    await join.waitForURL(/\/posts$/, eventually)
    await expect.poll(() => join.locator("#who-email").textContent(), eventually).toBe("noa@example.com (admin)")
    // The owner's team lists Noa as an admin, and the invitation is gone.
    await page.reload()
    await page.locator("tr[data-user=\"noa@example.com\"]").waitFor(eventually)
    expect(await page.locator("tr[data-invitation=\"noa@example.com\"]").count()).toBe(0)
    expect(errors).toEqual([])
    expect(joinErrors).toEqual([])
    await invitee.close()
    await page.close()
  }, 90_000)

  it(
    "a recipient the mail server refuses: the invitation stands, and the page says to send the link by hand",
    async () => {
      const page = await owner.newPage()
      const errors = Browsers.watchErrors(page)
      await page.goto("/team")
      await page.locator("main h1", { hasText: "Team" }).waitFor(eventually)
      await invite(page, "nobody@example.com", "member")
      expect(await page.locator("#invitation-mail.bad").textContent()).toMatch(
        /^The e-mail could not be sent \(the mail server answered: .*550.*No such user\); check the address, or send the link yourself\.$/
      )
      await page.locator("tr[data-invitation=\"nobody@example.com\"]").waitFor(eventually)
      expect(mails.filter((m) => m.to === "nobody@example.com")).toEqual([])
      expect(errors).toEqual([])
      await page.close()
    },
    60_000
  )
})
