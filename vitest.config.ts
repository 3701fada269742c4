import { defaultClientConditions, defaultServerConditions } from "vite"
import { defineConfig } from "vitest/config"

// The tests run the TypeScript sources: the packages' `herald-source` export condition points at src/.

export default defineConfig({
  resolve: { conditions: ["herald-source", ...defaultClientConditions] },
  ssr: { resolve: { conditions: ["herald-source", ...defaultServerConditions] } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["./test/support/BuildCli.ts"],
    setupFiles: ["./vitest.setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ["default", "./test/support/SummaryReporter.ts"]
  }
})
