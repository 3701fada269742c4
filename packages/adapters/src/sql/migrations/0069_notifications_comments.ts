import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * `notifications`: a person's in-app notifications, made with the event that causes them, newest
 * first per user (hence the index), with the state of their e-mail copy: `email_status` `pending`
 * (due at `email_next_at`), `sent` or `failed` (given up), and its attempts. Due e-mails are found by
 * status and time, hence the second index. A removed user's notifications go with them.
 *
 * `post_comments`: comments on a post between its author and its reviewers, listed per post oldest
 * first (hence the index), gone with the post. `author_id` stays when its user is removed.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE notifications (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    event_id TEXT NOT NULL,
    post_id TEXT,
    account_id BIGINT,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    read_at BIGINT,
    email_status TEXT NOT NULL,
    email_attempts INTEGER NOT NULL,
    email_next_at BIGINT
  )`
  yield* sql`CREATE INDEX notifications_user ON notifications (user_id, created_at)`
  yield* sql`CREATE INDEX notifications_email_due ON notifications (email_status, email_next_at)`
  yield* sql`CREATE TABLE post_comments (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    post_id TEXT NOT NULL REFERENCES posts (id) ON DELETE CASCADE,
    author_id TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at BIGINT NOT NULL
  )`
  yield* sql`CREATE INDEX post_comments_post ON post_comments (post_id, created_at)`
})
