/**
 * The hand-written peer of `POST /api/v1/posts` and `GET /api/v1/accounts`: bare node:http and
 * better-sqlite3 on a copy of a Herald database (same schema, indexes, foreign keys, organization,
 * key and accounts), `journal_mode = WAL`, `synchronous = FULL` (the same durability as Herald's
 * default), one transaction and one fsync per create.
 *
 * Per create it does what a careful hand-written server would: looks the bearer key up by SHA-256
 * in `api_keys` and its organization, parses and checks the body (content, account_ids of the
 * organization), hashes the request, inserts the post and its target rows in one transaction, and
 * answers 201 with the post in the envelope. `GET /api/v1/accounts` checks the key the same way and
 * answers the JSON body given in ACCOUNTS_JSON (what Herald answered), byte for byte.
 *
 * Usage: node bench/peers/create-peer.mjs <Herald's db file> <peer db file> <port>: copies Herald's
 * database (a consistent snapshot, `VACUUM INTO`), serves on the copy, prints "listening" when ready.
 */
import Database from "better-sqlite3"
import { createHash, randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"

const [source, file, port] = process.argv.slice(2)
const snapshot = new Database(source, { readonly: true })
snapshot.exec(`VACUUM INTO '${file.replaceAll("'", "''")}'`)
snapshot.close()
const db = new Database(file)
db.pragma("journal_mode = WAL")
db.pragma("synchronous = FULL")
db.pragma("foreign_keys = ON")
const accountsBody = fs.readFileSync(process.env.ACCOUNTS_JSON, "utf8")

const keyByHash = db.prepare("SELECT id, organization_id, revoked_at FROM api_keys WHERE hash = ?")
const orgById = db.prepare("SELECT id, subscription_status FROM organizations WHERE id = ?")
const accountIn = db.prepare("SELECT id FROM social_accounts WHERE organization_id = ? AND id = ?")
const insertPost = db.prepare(`INSERT INTO posts (id, organization_id, created_by_key, content, account_ids,
  platform_content, media_ids, scheduled_for, timezone, campaign_id, is_draft, created_status, approval,
  approval_status, idempotency_key, request_hash, thread_posts, use_queue, created_at, updated_at)
  VALUES (?, ?, ?, ?, ?, '{}', '[]', NULL, NULL, NULL, 1, 'draft', NULL, NULL, NULL, ?, '[]', 0, ?, ?)`)
const insertTarget = db.prepare("INSERT INTO post_targets (post_id, account_id) VALUES (?, ?)")
const create = db.transaction((row, accountIds) => {
  insertPost.run(
    row.id,
    row.organizationId,
    row.keyId,
    row.content,
    JSON.stringify(accountIds),
    row.hash,
    row.now,
    row.now
  )
  for (const account of accountIds) insertTarget.run(row.id, account)
})

const envelope = (res, status, data, error) => {
  const body = JSON.stringify({
    data,
    error,
    meta: { request_id: randomUUID(), timestamp: new Date().toISOString() }
  })
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
  res.end(body)
}

const authenticate = (req) => {
  const m = /^Bearer +(\S+)$/i.exec(req.headers.authorization ?? "")
  if (!m) return undefined
  const key = keyByHash.get(createHash("sha256").update(m[1]).digest("hex"))
  if (!key || key.revoked_at !== null) return undefined
  const org = orgById.get(key.organization_id)
  return org ? { keyId: key.id, organizationId: org.id } : undefined
}

http.createServer((req, res) => {
  const principal = authenticate(req)
  if (!principal) return envelope(res, 401, null, { code: "invalid_api_key", message: "Invalid API key" })
  if (req.method === "GET" && req.url === "/api/v1/accounts") {
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(accountsBody) })
    return res.end(accountsBody)
  }
  if (req.method !== "POST" || req.url !== "/api/v1/posts") return envelope(res, 404, null, { code: "not_found" })
  const chunks = []
  req.on("data", (c) => chunks.push(c))
  req.on("end", () => {
    const raw = Buffer.concat(chunks).toString("utf8")
    let body
    try {
      body = JSON.parse(raw)
    } catch {
      return envelope(res, 400, null, { code: "invalid_json" })
    }
    const ids = body.account_ids
    if (typeof body.content !== "string" || body.content.length === 0 || !Array.isArray(ids) || ids.length === 0) {
      return envelope(res, 400, null, { code: "validation_error" })
    }
    for (const id of ids) {
      if (!Number.isInteger(id) || !accountIn.get(principal.organizationId, id)) {
        return envelope(res, 404, null, { code: "not_found" })
      }
    }
    const now = Date.now()
    const row = {
      id: randomUUID(),
      organizationId: principal.organizationId,
      keyId: principal.keyId,
      content: body.content,
      hash: createHash("sha256").update(raw).digest("hex"),
      now
    }
    create(row, ids)
    const at = new Date(now).toISOString()
    envelope(res, 201, {
      id: row.id,
      post_id: row.id,
      content: row.content,
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
  })
}).listen(Number(port), "127.0.0.1", () => console.log("listening"))
