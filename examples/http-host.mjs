/**
 * A host web app (plain node:http; Express or Fastify look the same) whose own route schedules a post
 * through Herald in-process, and whose event handler logs `post.published`.
 *
 *   node examples/http-host.mjs
 *   curl -X POST localhost:3000/announcements -d '{"text":"We are live"}'                 (publishes now)
 *   curl -X POST localhost:3000/announcements -d '{"text":"Soon","at":"2030-01-01T09:00:00Z"}'
 */
import { createHerald, HeraldError } from "@herald/http/HeraldClient"
import { createServer } from "node:http"

const herald = await createHerald({
  dataDir: process.env.HERALD_DATA_DIR ?? ".herald-http-host",
  platforms: "sandbox",
  ...(process.env.HERALD_DATABASE_URL ? { database: process.env.HERALD_DATABASE_URL } : {})
})

await herald.events.subscribe(["post.published"], (event) => {
  console.log(`post.published ${event.data.post_id}`)
})

const readJson = async (request) => {
  let text = ""
  for await (const chunk of request) text += chunk
  return text === "" ? {} : JSON.parse(text)
}

const send = (response, status, body) => {
  response.writeHead(status, { "content-type": "application/json" })
  response.end(JSON.stringify(body))
}

const server = createServer(async (request, response) => {
  if (request.method !== "POST" || request.url !== "/announcements") return send(response, 404, { error: "not found" })
  try {
    const { text, at } = await readJson(request)
    const { accounts } = await herald.accounts.list()
    const post = await herald.posts.create({
      content: text,
      account_ids: accounts.slice(0, 1).map((a) => a.id),
      ...(at === undefined ? {} : { scheduled_for: at })
    })
    send(response, 201, { post_id: post.id, status: post.status, scheduled_for: post.scheduled_for })
  } catch (error) {
    if (error instanceof HeraldError) {
      return send(response, error.status ?? 400, { error: error.code, message: error.message })
    }
    send(response, 400, { error: "bad_request" })
  }
})

server.listen(Number(process.env.PORT ?? "3000"), "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`)
})

// Graceful stop: no new requests, then Herald's subscriptions and dispatcher.
const stop = () => server.close(() => herald.close().then(() => process.exit(0)))
process.once("SIGTERM", stop)
process.once("SIGINT", stop)
