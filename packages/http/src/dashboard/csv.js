// CSV as spreadsheets write it (RFC 4180): fields separated by commas (or semicolons, what spreadsheets
// in many locales export), a field in double quotes may hold separators, line breaks and doubled quotes
// (""), records end at CRLF, LF or CR. A byte-order mark at the start is dropped. Each record keeps the
// line it starts on, so a problem can be shown next to the line a person sees in their editor.

export class CsvError extends Error {
  constructor(message, line) {
    super(message)
    this.line = line
  }
}

/** The separator of a file: a semicolon when its first line has semicolons outside quotes and no comma. */
export const detectSeparator = (text) => {
  let commas = 0
  let semicolons = 0
  let quoted = false
  for (const c of text) {
    if (c === "\"") quoted = !quoted
    else if (!quoted && (c === "\n" || c === "\r")) break
    else if (!quoted && c === ",") commas++
    else if (!quoted && c === ";") semicolons++
  }
  return semicolons > 0 && commas === 0 ? ";" : ","
}

/**
 * The records of `text`, each `{ line, fields }` (`line` 1-based). Blank lines are skipped. A quote
 * inside an unquoted field is kept as text; text after a closing quote is kept too ("a"b -> ab), as
 * spreadsheets read it. An unclosed quote is an error naming the line it opened on.
 */
export const parseCsv = (input, separator = detectSeparator(input)) => {
  const text = input.charCodeAt(0) === 0xfeff ? input.slice(1) : input
  const records = []
  let fields = []
  let field = ""
  let line = 1
  let recordLine = 1
  let quoted = false
  let quoteLine = 0
  // Whether the current record has any character yet (a blank line is not a record).
  let started = false
  const endRecord = () => {
    fields.push(field)
    if (started) records.push({ line: recordLine, fields })
    fields = []
    field = ""
    started = false
  }
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quoted) {
      if (c === "\"") {
        if (text[i + 1] === "\"") {
          field += "\""
          i++
        } else quoted = false
      } else {
        if (c === "\n" || (c === "\r" && text[i + 1] !== "\n")) line++
        field += c
      }
      continue
    }
    if (c === "\r" || c === "\n") {
      if (c === "\r" && text[i + 1] === "\n") i++
      endRecord()
      line++
      recordLine = line
      continue
    }
    if (!started) {
      started = true
      recordLine = line
    }
    if (c === separator) {
      fields.push(field)
      field = ""
    } else if (c === "\"" && field === "") {
      quoted = true
      quoteLine = line
    } else field += c
  }
  if (quoted) throw new CsvError(`A quote opened on line ${quoteLine} is never closed.`, quoteLine)
  endRecord()
  return records
}

/**
 * Records with a header line as objects: `{ line, values }` where `values` maps each header name
 * (trimmed, lower case) to its field. Missing trailing fields are empty strings.
 */
export const parseCsvWithHeader = (input) => {
  const [header, ...rest] = parseCsv(input)
  if (header === undefined) return { columns: [], rows: [] }
  const columns = header.fields.map((name) => name.trim().toLowerCase())
  const rows = rest.map((record) => ({
    line: record.line,
    values: Object.fromEntries(columns.map((name, i) => [name, record.fields[i] ?? ""])),
    extra: record.fields.length > columns.length && record.fields.slice(columns.length).some((f) => f.trim() !== "")
  }))
  return { columns, rows }
}
