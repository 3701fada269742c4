/**
 * The hand-written Postgres peer of `POST /api/v1/posts`: bare node:http and the `pg` driver (the one
 * @effect/sql-pg brings) on the same Postgres database as the Herald server it is compared with (same
 * schema, indexes, foreign keys, organization, key and accounts), a pool of 10 connections like
 * Herald's default, and the server's `synchronous_commit` (`on` by default: every commit flushed to the
 * WAL before the answer, the same durability Herald has).
 *
 * Per create it does what a careful hand-written server would, in two round trips, both prepared
 * (named) statements: (1) the bearer key looked up by SHA-256 in `api_keys` joined to its
 * organization; (2) ONE statement that checks the account ids belong to the organization, inserts the
 * post and its target rows (a data-modifying CTE: one implicit transaction, one commit). The body is
 * parsed and checked (content, account_ids), the request hashed, and 201 answered with the post in the
 * envelope, as the SQLite peer (create-peer.mjs) does.
 *
 * Usage: node bench/peers/create-peer-pg.mjs <database url> <port>; prints "listening" when ready.
 */
import { createHash, randomUUID } from "node:crypto"
import * as http from "node:http"
import pg from "pg"

const [url, port] = process.argv.slice(2)
const pool = new pg.Pool({ connectionString: url, max: 10, application_name: "create-peer-pg" })

const keyByHash = {
  name: "peer_key_by_hash",
  text: `SELECT k.id, k.organization_id FROM api_keys k JOIN organizations o ON o.id = k.organization_id
    WHERE k.hash = $1 AND k.revoked_at IS NULL`
}
// The post is inserted only when every account id belongs to the organization; then its targets.
const create = {
  name: "peer_create_post",
  text: `WITH accounts AS (
      SELECT id FROM social_accounts WHERE organization_id = $2 AND id = ANY($5::bigint[])
    ), post AS (
      INSERT INTO posts (id, organization_id, created_by_key, content, account_ids, platform_content, media_ids,
        scheduled_for, timezone, campaign_id, is_draft, created_status, approval, approval_status, idempotency_key,
        request_hash, thread_posts, use_queue, created_at, updated_at)
      SELECT $1, $2, $3, $4, $6, '{}', '[]', NULL, NULL, NULL, 1, 'draft', NULL, NULL, NULL, $7, '[]', 0, $8, $8
      WHERE (SELECT COUNT(*) FROM accounts) = cardinality($5::bigint[])
      RETURNING id
    )
    INSERT INTO post_targets (post_id, account_id) SELECT post.id, accounts.id FROM post, accounts
    RETURNING post_id`
}

const envelope = (res, status, data, error) => {
  const body = JSON.stringify({
    data,
    error,
    meta: { request_id: randomUUID(), timestamp: new Date().toISOString() }
  })
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
  res.end(body)
}

const authenticate = async (req) => {
  const m = /^Bearer +(\S+)$/i.exec(req.headers.authorization ?? "")
  if (!m) return undefined
  const { rows } = await pool.query({ ...keyByHash, values: [createHash("sha256").update(m[1]).digest("hex")] })
  return rows[0] === undefined ? undefined : { keyId: rows[0].id, organizationId: rows[0].organization_id }
}

const handle = async (req, res, raw) => {
  const principal = await authenticate(req)
  if (!principal) return envelope(res, 401, null, { code: "invalid_api_key", message: "Invalid API key" })
  if (req.method !== "POST" || req.url !== "/api/v1/posts") return envelope(res, 404, null, { code: "not_found" })
  let body
  try {
    body = JSON.parse(raw)
  } catch {
    return envelope(res, 400, null, { code: "invalid_json" })
  }
  const ids = body.account_ids
  if (
    typeof body.content !== "string" || body.content.length === 0 || !Array.isArray(ids) || ids.length === 0 ||
    !ids.every((id) => Number.isInteger(id))
  ) {
    return envelope(res, 400, null, { code: "validation_error" })
  }
  const unique = [...new Set(ids)]
  const now = Date.now()
  const id = randomUUID()
  const hash = createHash("sha256").update(raw).digest("hex")
  const { rowCount } = await pool.query({
    ...create,
    values: [id, principal.organizationId, principal.keyId, body.content, unique, JSON.stringify(ids), hash, now]
  })
  if (rowCount !== unique.length) return envelope(res, 404, null, { code: "not_found" })
  const at = new Date(now).toISOString()
  envelope(res, 201, {
    id,
    post_id: id,
    content: body.content,
    account_ids: ids,
    platform_content: {},
    media_ids: [],
    scheduled_for: null,
    status: "draft",
    draft: true,
    destinations: [],
    created_at: at,
    updated_at: at
  }, null)
}

http.createServer((req, res) => {
  const chunks = []
  req.on("data", (c) => chunks.push(c))
  req.on("end", () => {
    handle(req, res, Buffer.concat(chunks).toString("utf8")).catch((e) => {
      if (!res.headersSent) envelope(res, 500, null, { code: "internal_error", message: String(e) })
    })
  })
}).listen(Number(port), "127.0.0.1", () => console.log("listening"))
