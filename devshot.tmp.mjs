// dev only: pages with the API key injected instead of a session
import { chromium } from "playwright-core"
const [base, key] = process.argv.slice(2)
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", headless: true, args: ["--no-sandbox", "--disable-gpu"] })
const ctx = await browser.newContext({ viewport: { width: 1100, height: 900 } })
const page = await ctx.newPage()
page.on("pageerror", (e) => console.log("PAGEERROR", String(e)))
page.on("console", (m) => m.type() === "error" && console.log("CONSOLE", m.text()))
await page.route("**/dashboard/api/session", (r) => r.fulfill({ json: { user: { id: "u", email: "owner@example.com", role: "owner" }, organization: { id: "o", name: "Org" }, csrf_token: "t" } }))
await page.route("**/dashboard/api/keys", (r) => r.fulfill({ json: { data: [{ id: "k1", name: "ci", prefix: "pe_live_ab", scopes: ["read"], account_ids: null, created_at: new Date().toISOString(), last_used_at: null, revoked_at: null }] } }))
await page.route("**/api/v1/**", (r) => r.continue({ headers: { ...r.request().headers(), authorization: `Bearer ${key}` } }))
for (const p of process.argv.slice(4).length ? process.argv.slice(4) : ["/posts", "/calendar", "/compose", "/approvals", "/accounts", "/developer", "/device", "/sign-in"]) {
  await page.goto(base + p)
  await page.waitForTimeout(800)
  await page.screenshot({ path: `/tmp/shot${p.replaceAll("/", "_")}.png`, fullPage: true })
  console.log(p, (await page.locator("main").innerText()).slice(0, 300).replaceAll("\n", " | "))
}
await browser.close()
