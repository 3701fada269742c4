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
import { type Browser, chromium, type Page } from "playwright-core"

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
