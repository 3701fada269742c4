/**
 * An axe-core accessibility scan of a page in the browser tests: axe-core's script is evaluated in
 * the page (through the DevTools protocol, which the dashboard's `script-src 'self'` policy does not
 * apply to, unlike an injected script tag), run over the whole document against the WCAG 2.x A and AA
 * rules and axe's best practices, and any critical or serious violation fails with one readable line
 * per violation and element.
 */
import * as fs from "node:fs"
import { createRequire } from "node:module"
import type { Page } from "playwright-core"

const source = fs.readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

export interface Violation {
  readonly id: string
  readonly impact: string | null
  readonly help: string
  readonly nodes: ReadonlyArray<
    { readonly target: ReadonlyArray<unknown>; readonly failureSummary?: string | undefined }
  >
}

declare const axe: {
  run: (
    context: unknown,
    options: unknown
  ) => Promise<{ violations: ReadonlyArray<Violation> }>
}
declare const document: unknown

/** The critical and serious violations of the page as it is now. */
export const violations = async (page: Page): Promise<ReadonlyArray<Violation>> => {
  await page.evaluate(source)
  const result = await page.evaluate(() =>
    axe.run(document, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"] },
      resultTypes: ["violations"]
    }).then((r) =>
      r.violations.map((v) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary }))
      }))
    )
  )
  return result.filter((v) => v.impact === "critical" || v.impact === "serious")
}

/** One line per violation and element: "serious color-contrast (Elements must meet ...): a.more — Fix ...". */
export const describe = (found: ReadonlyArray<Violation>): string =>
  found.flatMap((v) =>
    v.nodes.map((n) =>
      `${v.impact} ${v.id} (${v.help}): ${n.target.map(String).join(" ")} — ${
        (n.failureSummary ?? "").replace(/\s+/g, " ").trim()
      }`
    )
  ).join("\n")

/** Fails when the page has a critical or serious violation, naming each one and where it is. */
export const check = async (page: Page, name: string): Promise<void> => {
  const found = await violations(page)
  if (found.length > 0) {
    throw new Error(`axe-core on ${name}: ${found.length} critical or serious violation(s)\n${describe(found)}`)
  }
}
