import { v1 } from "../api.js"
import { busy, errorText, field, flash, h, notice, render, replace, status, table } from "../ui.js"

const oauthPlatforms = ["x", "instagram", "facebook", "youtube", "pinterest", "threads", "linkedin", "tiktok"]
const credentialFields = {
  telegram: [["bot_token", "Bot token", "password"], ["channel", "Channel (username or numeric chat id)", "text"]],
  discord: [["webhook_url", "Webhook URL", "url"]],
  bluesky: [["handle", "Handle", "text"], ["app_password", "App password (never the main password)", "password"]]
}

const linkResult = (result) =>
  h(
    "div",
    { class: "notice ok" },
    h("p", {}, result.instructions ?? "Open the link and approve access; the account then appears here."),
    h(
      "p",
      {},
      h("a", { href: result.url, target: "_blank", rel: "noopener noreferrer" }, `Authorize on ${result.platform}`),
      ` (valid ${Math.round((result.expires_in_seconds ?? 600) / 60)} minutes)`
    )
  )

/**
 * The credentials of a platform that takes them here. A refused connect keeps what was typed (the
 * form is never replaced by the message), with each problem under the field it concerns.
 */
const credentialForm = (platform, done) => {
  const out = h("div", { "aria-live": "polite" })
  const inputs = credentialFields[platform].map((
    [name, label, type]
  ) => [name, field(label, h("input", { type, name, required: true, autocomplete: "off" }), undefined, name)])
  const send = h("button", { type: "submit" }, `Connect ${platform}`)
  const form = h(
    "form",
    {
      "aria-label": `Connect ${platform}`,
      onsubmit: (e) => {
        e.preventDefault()
        const body = { platform }
        for (const [name, wrap] of inputs) body[name] = wrap.querySelector("input").value
        busy(send, out, async () => {
          const result = await v1("POST", "/accounts/connect-credential", body)
          flash(result.connected ? `Connected ${platform}.` : (result.instructions ?? "Not connected."))
          await done()
        }, { scope: form })
      }
    },
    out,
    inputs.map(([, wrap]) => wrap),
    h("div", { class: "actions" }, send)
  )
  return form
}

export default async function page() {
  const out = h("div", { "aria-live": "polite" })
  const list = (await v1("GET", "/accounts")).accounts ?? []
  const reports = await Promise.all(list.map((a) => v1("GET", `/accounts/${a.id}/health`).catch(() => null)))
  const rows = list.map((a, i) => {
    const report = reports[i]
    const reconnect = h("button", { type: "button", class: "secondary" }, "Reconnect")
    reconnect.addEventListener("click", () =>
      busy(reconnect, out, async () => {
        if (credentialFields[a.platform]) {
          replace(out, h("h2", {}, `Reconnect ${a.account_name}`), credentialForm(a.platform, () => page()))
          return
        }
        replace(out, linkResult(await v1("POST", `/accounts/${a.id}/reconnect`, {})))
      }))
    const disconnect = h("button", { type: "button", class: "danger" }, "Disconnect")
    disconnect.addEventListener("click", () => {
      if (!confirm(`Disconnect ${a.account_name} (${a.platform})? Scheduled posts to it will fail.`)) return
      busy(disconnect, out, async () => {
        await v1("DELETE", `/accounts/${a.id}`)
        flash(`Disconnected ${a.account_name}.`)
        await page()
      })
    })
    return h(
      "tr",
      {},
      h("td", {}, a.account_name),
      h("td", {}, a.platform),
      h("td", {}, status(report?.status ?? a.health?.status)),
      h(
        "td",
        {},
        report?.reasons?.length
          ? report.reasons.map((r) => r.replaceAll("_", " ")).join(", ")
          : h("span", { class: "muted" }, "—")
      ),
      h("td", {}, h("div", { class: "actions" }, reconnect, disconnect))
    )
  })
  const platform = h(
    "select",
    { name: "platform", id: "connect-platform" },
    h("option", { value: "" }, "Choose…"),
    [...oauthPlatforms, ...Object.keys(credentialFields)].map((p) => h("option", { value: p }, p))
  )
  const connectOut = h("div", { "aria-live": "polite" })
  platform.addEventListener("change", async () => {
    const p = platform.value
    replace(connectOut)
    if (p === "") return
    if (credentialFields[p]) connectOut.append(credentialForm(p, () => page()))
    else {
      try {
        connectOut.append(linkResult(await v1("POST", "/accounts/connect-link", { platform: p })))
      } catch (e) {
        connectOut.append(notice(errorText(e), "bad"))
      }
    }
  })
  render(
    "Accounts",
    out,
    list.length === 0
      ? notice("No accounts connected yet.")
      : table(["Account", "Platform", "Health", "Reasons", ""], rows),
    h("h2", {}, "Connect an account"),
    field(
      "Platform",
      platform,
      "OAuth platforms give a link to approve in a browser; Telegram, Discord and Bluesky take credentials here."
    ),
    connectOut
  )
}
