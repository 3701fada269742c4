import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * The media library: one row per medium (the bytes live in the blob store under `storage_key`).
 * Listing is newest first per organization, optionally by kind.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE media (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    filename TEXT NOT NULL,
    mime_type TEXT NOT NULL,
    size BIGINT NOT NULL,
    kind TEXT NOT NULL,
    width INTEGER,
    height INTEGER,
    duration_ms BIGINT,
    status TEXT NOT NULL,
    error TEXT,
    storage_key TEXT NOT NULL,
    source_url TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
  )`
  yield* sql`CREATE INDEX media_by_organization ON media (organization_id, created_at, id)`
  yield* sql`CREATE INDEX media_by_organization_kind ON media (organization_id, kind, created_at, id)`
})
