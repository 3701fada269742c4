// Bulk schedule from a CSV file: the file's rows (date, time, content, platforms, media) are checked
// by POST /posts/bulk-schedule with dryRun, each row's outcome is shown beside it (problems in plain
// words, by the line of the file), and one click schedules the rows that passed. A row with a problem
// is left out; fixing it in the file and checking again brings it in.
import { ApiError, v1 } from "../api.js"
import { CsvError, parseCsvWithHeader } from "../csv.js"
import { plainText, platformName } from "../errors.js"
import { busy, field, flash, h, notice, render, replace, time, zone } from "../ui.js"
import { excerpt, scrollableTable } from "./shared.js"

const maxRows = 100
const required = ["date", "time", "content", "platforms"]
const known = [...required, "media"]

/** A row's problem in the words of the page (the file's columns), from the API's message. */
const rowMessage = (message) => {
  const text = String(message ?? "")
    .replace(/^content is required$/, "the content column is empty: enter the text of the post")
    .replace(/, or set accountMapping\.\w+/, " in the platforms column")
    .replace(/\bno active (\w+) account\b/, (_, p) => `no active ${platformName(p)} account`)
    .replace(
      /^(\d+) (\w+) accounts are connected/,
      (_, count, p) => `${count} ${platformName(p)} accounts are connected`
    )
  return plainText(text)
}

/**
 * The rows of a CSV file as bulk-schedule rows, each with the line it starts on; `problem` for a file
 * that cannot be sent at all, `local` for a row that cannot be sent (it is shown, not checked).
 */
export const readRows = (text) => {
  let parsed
  try {
    parsed = parseCsvWithHeader(text)
  } catch (e) {
    if (e instanceof CsvError) return { problem: e.message }
    throw e
  }
  const missing = required.filter((c) => !parsed.columns.includes(c))
  if (parsed.columns.length === 0) return { problem: "The file is empty." }
  if (missing.length > 0) {
    return {
      problem: `The first line of the file must name the columns; ${missing.join(", ")} ${
        missing.length === 1 ? "is" : "are"
      } missing (it has: ${parsed.columns.filter((c) => c !== "").join(", ") || "none"}).`
    }
  }
  const rows = parsed.rows.filter((r) => Object.values(r.values).some((v) => v.trim() !== ""))
  if (rows.length === 0) return { problem: "The file has no rows under its header line." }
  if (rows.length > maxRows) {
    return {
      problem:
        `The file has ${rows.length} rows; at most ${maxRows} are scheduled at once: split it into files of ${maxRows}.`
    }
  }
  const unknown = parsed.columns.filter((c) => c !== "" && !known.includes(c))
  return {
    unknown,
    rows: rows.map((r) => ({
      line: r.line,
      local: r.extra
        ? "This line has more fields than the header: text with a comma must be in double quotes."
        : null,
      row: {
        date: r.values.date,
        time: r.values.time,
        content: r.values.content,
        platforms: r.values.platforms,
        ...(r.values.media?.trim() ? { media: r.values.media.trim() } : {})
      }
    }))
  }
}

/** Sends the rows; a 422 (batch errors: nothing scheduled) carries the whole result in its details. */
const send = async (rows, timezone, dryRun) => {
  try {
    return await v1("POST", "/posts/bulk-schedule", { posts: rows, timezone, dryRun })
  } catch (e) {
    if (e instanceof ApiError && e.status === 422 && Array.isArray(e.details?.results)) return e.details
    throw e
  }
}

/** Each line's outcome: `{ line, row, status, message, postId, scheduledFor }`. */
const outcomes = (lines, sent, result) =>
  lines.map((l) => {
    if (l.local) return { ...l, status: "error", message: l.local }
    const r = result.results.find((x) => x.row === sent.indexOf(l))
    return {
      ...l,
      status: r?.status ?? "error",
      message: r?.error ? rowMessage(r.error) : null,
      postId: r?.postId ?? null,
      scheduledFor: r?.scheduledFor ?? null
    }
  })

/** A row's outcome; `held`: the batch has a problem, so a row that passed waits for it. */
const resultCell = (o, held) =>
  h(
    "td",
    { class: "result" },
    o.status === "error"
      ? h("span", { class: "error" }, `Problem: ${o.message}`)
      : o.status === "scheduled"
      ? [
        "Scheduled for ",
        time(o.scheduledFor),
        " · ",
        h("a", { href: `/posts/${o.postId}`, "aria-label": `Open the post of line ${o.line}` }, "open")
      ]
      : [held ? "Ready once the problem above is solved: " : "Ready: ", time(o.scheduledFor)]
  )

// The result comes second: on a phone the table scrolls sideways, and the outcome must be in view.
const resultTable = (rows, held) =>
  scrollableTable(
    "Rows of the file",
    ["Line", "Result", "Date", "Time", "Platforms", "Content"],
    rows.map((o) =>
      h(
        "tr",
        { class: o.status === "error" ? "row-error" : null, dataset: { line: String(o.line), status: o.status } },
        h("th", { scope: "row" }, String(o.line)),
        resultCell(o, held),
        h("td", {}, o.row.date),
        h("td", {}, o.row.time),
        h("td", {}, o.row.platforms),
        h("td", {}, excerpt(o.row.content, 60), o.row.media ? h("span", { class: "muted" }, ` · ${o.row.media}`) : null)
      )
    )
  )

/** Ends with a full stop ("(… in this batch)" -> "(… in this batch)."). */
const sentence = (text) => (/[.!?]$/.test(text) ? text : `${text}.`)

const counted = (count, one, many = `${one}s`) => `${count} ${count === 1 ? one : many}`

export default async () => {
  const file = h("input", { type: "file", accept: ".csv,text/csv", name: "file", required: true })
  const zoneInput = h("input", {
    type: "text",
    name: "timezone",
    value: zone(),
    list: "zones",
    autocomplete: "off",
    spellcheck: "false",
    required: true
  })
  const zones = h(
    "datalist",
    { id: "zones" },
    (Intl.supportedValuesOf?.("timeZone") ?? []).map((z) => h("option", { value: z }))
  )
  const check = h("button", { type: "submit" }, "Check rows")
  const out = h("div", { id: "bulk-out" })
  const results = h("section", { id: "bulk-results", "aria-labelledby": "bulk-results-h" })
  const form = h(
    "form",
    { id: "bulk-form", novalidate: true },
    field("CSV file", file, "A header line, then one post per line. At most 100 rows.", "file"),
    field("Time zone of the dates and times", zoneInput, "An IANA zone, e.g. Europe/Berlin.", "timezone"),
    zones,
    h("div", { class: "actions" }, check),
    out
  )
  // A check is of one file and zone: changing either asks for a new check.
  const forget = () => replace(results)
  file.addEventListener("change", forget)
  zoneInput.addEventListener("input", forget)

  const showOutcome = (lines, rows, result, timezone) => {
    const ready = rows.filter((o) => o.status === "valid")
    const scheduled = rows.filter((o) => o.status === "scheduled")
    const problems = rows.filter((o) => o.status === "error")
    const batch = result.batchErrors ?? []
    const summary = batch.length > 0
      ? `${counted(rows.length, "row")} checked: nothing ${result.dryRun ? "can be" : "was"} scheduled.`
      : result.dryRun
      ? `${counted(rows.length, "row")} checked: ${ready.length} ready, ${
        counted(problems.length, "row")
      } with a problem.`
      : `${counted(scheduled.length, "post")} scheduled${
        problems.length > 0 ? `; ${counted(problems.length, "row")} not scheduled` : ""
      }.`
    const schedule = h("button", { type: "button", id: "bulk-schedule" }, `Schedule ${counted(ready.length, "post")}`)
    schedule.addEventListener("click", () =>
      busy(schedule, out, async () => {
        const valid = lines.filter((l) => ready.some((o) => o.line === l.line))
        const done = await send(valid.map((l) => l.row), timezone, false)
        // The rows left out keep the problem the check found; the others show what scheduling did.
        const sent = outcomes(valid, valid, done)
        showOutcome(lines, rows.map((o) => sent.find((x) => x.line === o.line) ?? o), done, timezone)
        flash(`${counted(done.scheduled ?? 0, "post")} scheduled.`)
      }, { scope: form }))
    replace(
      results,
      h("h2", { id: "bulk-results-h" }, result.dryRun ? "Check" : "Scheduled"),
      h("p", { id: "bulk-summary", role: "status" }, summary),
      problems.length > 0
        ? h(
          "ul",
          { id: "bulk-problems", "aria-label": "Rows with a problem" },
          problems.map((o) => h("li", { class: "error" }, `Line ${o.line}: ${o.message}`))
        )
        : null,
      batch.length > 0
        ? notice(
          `Nothing can be scheduled: ${batch.map((b) => sentence(plainText(b.message))).join(" ")} ` +
            "Change the file and check it again.",
          "bad"
        )
        : null,
      (result.batchWarnings ?? []).map((w) => notice(plainText(w.message))),
      h("p", { class: "muted" }, `Dates and times are read in ${timezone}; the results show them in your zone.`),
      resultTable(rows, batch.length > 0),
      result.dryRun && batch.length === 0 && ready.length > 0
        ? h(
          "div",
          { class: "actions" },
          schedule,
          problems.length > 0
            ? h(
              "p",
              { class: "muted" },
              `${
                counted(problems.length, "row")
              } with a problem will be left out: fix the file and check it again to include ${
                problems.length === 1 ? "it" : "them"
              }.`
            )
            : null
        )
        : null,
      result.dryRun
        ? null
        : h("p", {}, h("a", { href: "/calendar" }, "See the calendar"), " · ", h("a", { href: "/posts" }, "Posts"))
    )
  }

  form.addEventListener("submit", (e) => {
    e.preventDefault()
    busy(check, out, async () => {
      forget()
      const fileProblem = (message) => new ApiError(400, { message, details: { fields: ["file"] } })
      if (!file.files?.[0]) throw fileProblem("Choose a CSV file.")
      const read = readRows(await file.files[0].text())
      if (read.problem) throw fileProblem(read.problem)
      const timezone = zoneInput.value.trim()
      const lines = read.rows
      const sent = lines.filter((l) => !l.local)
      const result = sent.length === 0
        ? { dryRun: true, results: [], batchErrors: [], batchWarnings: [] }
        : await send(sent.map((l) => l.row), timezone, true)
      if (read.unknown.length > 0) {
        replace(out, notice(`Columns not used: ${read.unknown.join(", ")} (the columns are ${known.join(", ")}).`))
      }
      showOutcome(lines, outcomes(lines, sent, result), result, timezone)
      results.querySelector("h2")?.setAttribute("tabindex", "-1")
      results.querySelector("h2")?.focus()
    }, { scope: form })
  })

  render(
    "Bulk schedule",
    h(
      "p",
      {},
      "Schedule many posts from a CSV file (a spreadsheet saved as CSV). Every row is checked first; nothing is ",
      "scheduled until you press Schedule."
    ),
    h(
      "details",
      {},
      h("summary", {}, "The file's columns"),
      h(
        "ul",
        {},
        h("li", {}, h("code", {}, "date"), ": the day, as YYYY-MM-DD."),
        h("li", {}, h("code", {}, "time"), ": HH:MM, 24-hour, in the time zone below."),
        h("li", {}, h("code", {}, "content"), ": the text; in double quotes when it holds a comma or a line break."),
        h(
          "li",
          {},
          h("code", {}, "platforms"),
          ": platform names or account IDs joined with +, e.g. x+bluesky or 12+linkedin."
        ),
        h("li", {}, h("code", {}, "media"), " (optional): the file name of an image or video in the media library.")
      ),
      h(
        "pre",
        { class: "secret" },
        "date,time,content,platforms\n2027-03-01,09:30,\"Spring sale, today only\",x+bluesky"
      )
    ),
    form,
    results
  )
}
