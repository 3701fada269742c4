/**
 * Prints one plain closing line, `vitest: N passed, N failed, N skipped`, that any CI reader recognizes.
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

export default class SummaryReporter implements Reporter {
  onFinished(files: ReadonlyArray<RunnerTestFile> = [], errors: ReadonlyArray<unknown> = []) {
    const counts = { passed: 0, failed: 0, skipped: 0 }
    collect(files, counts)
    // Unhandled errors count as failures too (a file that failed to load is an empty failed suite).
    counts.failed += errors.length
    process.stdout.write(`\nvitest: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`)
  }
}
