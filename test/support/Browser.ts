/**
 * For the dashboard's browser tests: Debian's Chromium (`chromium` package) driven by playwright-core,
 * headless, no sandbox, background networking off, on a fresh temporary profile (playwright's
 * `launch` makes a new user-data-dir each time and removes it on close). One browser per test file,
 * shared by its tests; each test takes its own context (cookies apart). Where no Chromium exists the
 * suites skip with the printed reason.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

export const executablePath = process.env.HERALD_CHROMIUM ?? "/usr/bin/chromium"

/** Why the browser tests cannot run here; undefined when they can. */
export const skipReason: string | undefined = fs.existsSync(executablePath)
  ? undefined
  : `no Chromium at ${executablePath} (install Debian's chromium package, or set HERALD_CHROMIUM)`

export const args = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-dev-shm-usage"
]

export const launch = (): Promise<Browser> => chromium.launch({ executablePath, headless: true, args })

/** Where the screenshots go (gitignored). */
export const artifacts = path.join(root, "test-artifacts", "dashboard")

/** A full-page screenshot named after the page, for people to look at (nothing compares them). */
export const screenshot = async (page: Page, name: string): Promise<void> => {
  fs.mkdirSync(artifacts, { recursive: true })
  await page.screenshot({ path: path.join(artifacts, `${name}.png`), fullPage: true })
}

/** Fails the test on any script error or failed console assertion of the page. */
export const watchErrors = (page: Page): Array<string> => {
  const errors: Array<string> = []
  page.on("pageerror", (e) => errors.push(String(e)))
  return errors
}

/** A running `herald serve`, as far as signing its owner in needs it. */
interface OwnerServer {
  readonly baseUrl: string
  readonly output: () => string
  readonly request: (
    method: string,
    path: string,
    options: { readonly key: null; readonly body: unknown }
  ) => Promise<{ readonly status: number; readonly text: string; readonly json: unknown; readonly headers: Headers }>
}

/**
 * Sets the owner's password from the link a first start prints, over HTTP, and returns the owner's
 * email: what a file that shares one signed-in browser context does once, instead of through the pages.
 */
export const setOwnerPassword = async (server: OwnerServer, password: string): Promise<string> => {
  for (let i = 0; i < 200 && !/HERALD_OWNER_LINK=\S+token=[0-9a-f]{64}/.test(server.output()); i++) {
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const token = /HERALD_OWNER_LINK=\S+token=([0-9a-f]{64})/.exec(server.output())?.[1]
  const email = /the owner \(([^)\s]+)\)/.exec(server.output())?.[1]
  if (token === undefined || email === undefined) throw new Error(`no owner link printed:\n${server.output()}`)
  const set = await server.request("POST", "/dashboard/api/password", { key: null, body: { token, password } })
  if (set.status !== 204) throw new Error(`setting the owner's password: ${set.status} ${set.text}`)
  return email
}

/** Signs `email` in over HTTP and puts the session cookie into `context`; returns the session's cookie and CSRF token. */
export const signInto = async (
  context: BrowserContext,
  server: OwnerServer,
  credentials: { readonly email: string; readonly password: string }
): Promise<{ readonly cookie: string; readonly csrf: string }> => {
  const signedIn = await server.request("POST", "/dashboard/api/session", { key: null, body: credentials })
  const cookie = /herald_session=([0-9a-f]{64})/.exec(signedIn.headers.get("set-cookie") ?? "")?.[1]
  if (signedIn.status !== 200 || cookie === undefined) {
    throw new Error(`signing in: ${signedIn.status} ${signedIn.text}`)
  }
  await context.addCookies([{
    name: "herald_session",
    value: cookie,
    url: server.baseUrl,
    httpOnly: true,
    sameSite: "Strict"
  }])
  return { cookie, csrf: (signedIn.json as { csrf_token: string }).csrf_token }
}
