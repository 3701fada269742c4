/**
 * The media file generators, for the repo-level suites. They live in the adapters package's test
 * support so that package's own tests can use them too (a package's tests cannot reach outside it).
 */
export * from "../../packages/adapters/test/support/MediaFixtures.js"
