/**
 * Prints one plain closing line, `vitest: N passed, N failed, N skipped`, that any CI reader recognizes,
 * preceded by the slowest test files (CI has a time budget; this says where it goes).
 */
import type { Reporter, RunnerTask, RunnerTestFile } from "vitest/node"

const collect = (tasks: ReadonlyArray<RunnerTask>, into: { passed: number; failed: number; skipped: number }) => {
  for (const task of tasks) {
    if (task.type === "suite") {
      collect(task.tasks, into)
      if (task.result?.state === "fail" && task.tasks.length === 0) into.failed++
    } else {
      const state = task.result?.state
      if (state === "pass") into.passed++
      else if (state === "fail") into.failed++
      else into.skipped++
    }
  }
}

/** How many of the slowest files the closing lines name. */
export const slowestShown = 10

/** The slowest files first: name and seconds (collection, set-up and tests of the file). */
export const slowest = (files: ReadonlyArray<RunnerTestFile>, count: number) =>
  files
    .map((file) => ({
      name: file.name,
      seconds: ((file.collectDuration ?? 0) + (file.setupDuration ?? 0) + (file.result?.duration ?? 0)) / 1000
    }))
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, count)

export default class SummaryReporter implements Reporter {
  onFinished(files: ReadonlyArray<RunnerTestFile> = [], errors: ReadonlyArray<unknown> = []) {
    const counts = { passed: 0, failed: 0, skipped: 0 }
    collect(files, counts)
    // Unhandled errors count as failures too (a file that failed to load is an empty failed suite).
    counts.failed += errors.length
    if (files.length > 1) {
      const lines = slowest(files, slowestShown).map((f) => `  ${f.seconds.toFixed(1).padStart(7)} s  ${f.name}`)
      process.stdout.write(`\nslowest test files:\n${lines.join("\n")}\n`)
    }
    process.stdout.write(`\nvitest: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`)
  }
}
