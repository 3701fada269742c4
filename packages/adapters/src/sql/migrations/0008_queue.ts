import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * The posting queue:
 * - one queue per organization (`queues_by_organization`, unique);
 * - `queue_slots`: which openings are taken, one row per (organization, instant). The primary key is
 *   what makes two concurrent allocations of one opening impossible, in one process or many: the
 *   second insert waits for the first transaction and then conflicts, and allocation moves on to the
 *   next opening. A row whose post is gone, or was rescheduled away from the instant, is stale and
 *   is replaced by the next claim of that opening.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE UNIQUE INDEX queues_by_organization ON queues (organization_id)`
  yield* sql`CREATE TABLE queue_slots (
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    slot_at BIGINT NOT NULL,
    post_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (organization_id, slot_at)
  )`
})
