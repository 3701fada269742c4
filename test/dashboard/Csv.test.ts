/**
 * The dashboard's CSV reader (packages/http/src/dashboard/csv.js), which the bulk page uses on files
 * exported by spreadsheets: quoted fields with separators, doubled quotes and line breaks, CRLF/LF/CR
 * line ends, a byte-order mark, semicolon-separated files, blank lines, and the line each record
 * starts on (where the page shows a row's problem).
 */
import { describe, expect, it } from "@effect/vitest"
// @ts-expect-error: a browser ES module of the dashboard, without type declarations
import * as CsvModule from "../../packages/http/src/dashboard/csv.js"

interface CsvRecord {
  readonly line: number
  readonly fields: ReadonlyArray<string>
}
const Csv = CsvModule as {
  readonly parseCsv: (text: string, separator?: string) => ReadonlyArray<CsvRecord>
  readonly detectSeparator: (text: string) => string
  readonly parseCsvWithHeader: (text: string) => {
    readonly columns: ReadonlyArray<string>
    readonly rows: ReadonlyArray<{ line: number; values: Record<string, string>; extra: boolean }>
  }
  readonly CsvError: new(message: string, line: number) => Error & { line: number }
}

const fieldsOf = (text: string) => Csv.parseCsv(text).map((r) => r.fields)

describe("CSV reader", () => {
  it("splits plain fields and records, with LF, CRLF and CR line ends", () => {
    expect(fieldsOf("a,b,c\n1,2,3\n")).toEqual([["a", "b", "c"], ["1", "2", "3"]])
    expect(fieldsOf("a,b\r\n1,2\r\n")).toEqual([["a", "b"], ["1", "2"]])
    expect(fieldsOf("a,b\r1,2")).toEqual([["a", "b"], ["1", "2"]])
  })

  it("keeps separators, doubled quotes and line breaks inside quoted fields", () => {
    expect(fieldsOf("\"Hello, world\",\"She said \"\"hi\"\"\",\"two\nlines\"\nx,y,z")).toEqual([
      ["Hello, world", "She said \"hi\"", "two\nlines"],
      ["x", "y", "z"]
    ])
    expect(fieldsOf("\"\",\"\"\"\"\n")).toEqual([["", "\""]])
    expect(fieldsOf("\"a\r\nb\",c\r\n")).toEqual([["a\r\nb", "c"]])
  })

  it("keeps empty fields, including a trailing one", () => {
    expect(fieldsOf("a,,c,\n")).toEqual([["a", "", "c", ""]])
  })

  it("skips blank lines and a byte-order mark, and numbers records by the line they start on", () => {
    const records = Csv.parseCsv("\uFEFFdate,content\n\n2027-01-01,\"first\nsecond\"\n\n2027-01-02,third\n")
    expect(records).toEqual([
      { line: 1, fields: ["date", "content"] },
      { line: 3, fields: ["2027-01-01", "first\nsecond"] },
      { line: 6, fields: ["2027-01-02", "third"] }
    ])
  })

  it("keeps a quote inside an unquoted field, and text after a closing quote, as text", () => {
    expect(fieldsOf("5\" screen,\"a\"b\n")).toEqual([["5\" screen", "ab"]])
  })

  it("refuses an unclosed quote, naming the line it opened on", () => {
    let error: (Error & { line?: number }) | undefined
    try {
      Csv.parseCsv("a,b\n1,\"never closed\n3,4\n")
    } catch (e) {
      error = e as Error & { line?: number }
    }
    expect(error).toBeInstanceOf(Csv.CsvError)
    expect(error?.line).toBe(2)
    expect(error?.message).toBe("A quote opened on line 2 is never closed.")
  })

  it("reads semicolon-separated files (spreadsheets in many locales), and commas otherwise", () => {
    expect(Csv.detectSeparator("date;time;content\n1;2;a,b")).toBe(";")
    expect(Csv.detectSeparator("date,time,content\n")).toBe(",")
    expect(Csv.detectSeparator("\"a;b\",c\n")).toBe(",")
    expect(fieldsOf("date;content\n2027-01-01;\"a; b, c\"\n")).toEqual([["date", "content"], ["2027-01-01", "a; b, c"]])
  })

  it("maps records to the header's names (trimmed, lower case), missing fields empty, extra ones flagged", () => {
    const { columns, rows } = Csv.parseCsvWithHeader(
      " Date ,TIME,content\n2027-01-01,10:00\n2027-01-02,11:00,x,surplus\n"
    )
    expect(columns).toEqual(["date", "time", "content"])
    expect(rows).toEqual([
      { line: 2, values: { date: "2027-01-01", time: "10:00", content: "" }, extra: false },
      { line: 3, values: { date: "2027-01-02", time: "11:00", content: "x" }, extra: true }
    ])
    expect(Csv.parseCsvWithHeader("")).toEqual({ columns: [], rows: [] })
  })
})
