/**
 * A plain Node host using Herald in-process through the Promise API: no API key, no HTTP, no
 * TypeScript. It publishes one post through the sandbox platforms and logs `post.published`.
 *
 *   node examples/host-promise.mjs            (data in ./.herald-host, or HERALD_DATA_DIR)
 */
import { createHerald, HeraldError } from "@herald/http/HeraldClient"

const herald = await createHerald({
  dataDir: process.env.HERALD_DATA_DIR ?? ".herald-host",
  platforms: "sandbox",
  ...(process.env.HERALD_DATABASE_URL ? { database: process.env.HERALD_DATABASE_URL } : {})
})

try {
  let post
  let onPublished
  const published = new Promise((resolve) => (onPublished = resolve))
  // Subscribed before creating, so the event cannot be missed (the subscription starts at "now").
  await herald.events.subscribe(["post.published"], (event) => {
    if (event.data.post_id !== post?.id) return
    console.log(`post.published ${event.data.post_id} (event ${event.event_id})`)
    onPublished(event)
  })

  const { accounts } = await herald.accounts.list()
  post = await herald.posts.create({ content: "Hello from a host app", account_ids: [accounts[0].id] })
  console.log(`created post ${post.id} (${post.status})`)
  await published

  // Errors carry the API's error codes.
  await herald.posts.get("00000000-0000-4000-8000-000000000000").catch((error) => {
    if (error instanceof HeraldError) console.log(`lookup failed: ${error.code}`)
    else throw error
  })
} finally {
  await herald.close()
}
