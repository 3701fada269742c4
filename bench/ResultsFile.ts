/**
 * bench/results.md holds the current figures, one section per bench program: a run replaces its own
 * section (from its `## ` heading up to the next one) and appends it only when the file has none yet,
 * so the file never grows into a history of runs.
 */
import * as fs from "node:fs"

export const replaceSection = (file: string, heading: string, section: string): void => {
  const existing = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : ""
  const at = existing.indexOf(`${heading}\n`)
  const next = at === -1 ? -1 : existing.indexOf("\n## ", at + heading.length)
  const body = section.trimEnd() + "\n"
  const updated = at === -1
    ? `${existing.trimEnd()}\n\n${body}`
    : `${existing.slice(0, at)}${body}${next === -1 ? "" : existing.slice(next)}`
  fs.writeFileSync(file, updated)
}
