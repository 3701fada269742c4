/**
 * The template rows the scale benches copy (`ScaleSeed.seed`): a webhook on three post events and one
 * post the sandbox publishes, created through the API of a running `herald serve --sandbox`.
 */
import * as HeraldServer from "./HeraldServer.js"

export const prepareTemplates = async (server: HeraldServer.HeraldServer): Promise<void> => {
  const headers = { authorization: `Bearer ${server.key}`, "content-type": "application/json" }
  await fetch(`${server.base}/webhooks`, {
    method: "POST",
    headers,
    body: JSON.stringify({ url: "http://127.0.0.1:9/bench", events: ["post.published", "post.failed", "post.created"] })
  }).then((r) => r.text())
  const account = await HeraldServer.draftAccount(server.base, server.key)
  const created = await fetch(`${server.base}/posts`, {
    method: "POST",
    headers,
    body: JSON.stringify({ content: "template", account_ids: [account.id] })
  })
  if (!created.ok) throw new Error(`template post: ${created.status} ${await created.text()}`)
  // The sandbox publishes it: its destination and events are the templates.
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    const body = await (await fetch(`${server.base}/posts`, { headers })).json() as {
      data: { posts: Array<{ status: string }> }
    }
    if (body.data.posts[0]?.status === "published") break
    await HeraldServer.sleep(100)
  }
}
