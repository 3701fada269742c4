import { api, v1 } from "../api.js"
import { isReviewer } from "../app.js"
import { busy, checkbox, errorText, field, flash, h, notice, render, replace, status, table, time } from "../ui.js"
import { accounts as loadAccounts } from "./shared.js"

const scopes = ["read", "write", "ai"]
const events = [
  "post.scheduled",
  "post.publishing",
  "post.published",
  "post.failed",
  "post.partially_failed",
  "post.updated",
  "post.deleted",
  "account.connected",
  "account.disconnected",
  "account.reconnect_needed",
  "media.uploaded",
  "media.deleted",
  "post.approval_requested",
  "post.approved",
  "post.changes_requested"
]

/** A secret shown once, with a copy button. */
const secretBox = (label, secret, warning) => {
  const copy = h("button", { type: "button", class: "secondary" }, "Copy")
  copy.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(secret)
      flash("Copied.")
    } catch {
      flash("Copy failed: select the text and copy it.")
    }
  })
  return h(
    "div",
    { class: "notice ok", role: "status" },
    h("p", {}, h("strong", {}, label), " — shown only this once. Keep it now."),
    h("output", { class: "secret", "data-secret": "" }, secret),
    warning ? h("p", { class: "muted" }, warning) : null,
    h("div", { class: "actions" }, copy)
  )
}

const keysSection = async (session, accounts) => {
  const section = h("section", { "aria-labelledby": "keys-h" })
  const out = h("div", { "aria-live": "polite" })
  const draw = async (created) => {
    const keys = (await api("GET", "/dashboard/api/keys")).data ?? []
    const rows = keys.map((k) => {
      const revoke = h("button", { type: "button", class: "danger", "aria-label": `Revoke ${k.name}` }, "Revoke")
      revoke.disabled = k.revoked_at !== null && k.revoked_at !== undefined
      revoke.addEventListener("click", () => {
        if (!confirm(`Revoke the key "${k.name}"? Programs using it stop working at once.`)) return
        busy(revoke, out, async () => {
          await api("DELETE", `/dashboard/api/keys/${encodeURIComponent(k.id)}`)
          flash(`Revoked ${k.name}.`)
          await draw()
        })
      })
      return h(
        "tr",
        { "data-key": k.id },
        h("td", {}, k.name),
        h("td", {}, h("code", {}, `${k.prefix}…`)),
        h("td", {}, (k.scopes ?? []).join(", ")),
        h("td", {}, k.account_ids ? k.account_ids.join(", ") : "all"),
        h("td", {}, time(k.created_at)),
        h("td", {}, time(k.last_used_at)),
        h("td", {}, k.revoked_at ? status("revoked") : status("active")),
        h("td", {}, isReviewer(session) ? revoke : "")
      )
    })
    replace(
      section,
      h("h2", { id: "keys-h" }, "API keys"),
      created ? secretBox(`New key "${created.key.name}"`, created.secret) : null,
      out,
      keys.length === 0
        ? notice("No keys.")
        : table(["Name", "Prefix", "Scopes", "Accounts", "Created", "Last used", "State", ""], rows),
      isReviewer(session) ? createForm() : h("p", { class: "muted" }, "Owners and admins create keys.")
    )
  }
  const createForm = () => {
    const name = h("input", { type: "text", name: "key-name", required: true, maxlength: "100" })
    const scopeBoxes = h(
      "fieldset",
      {},
      h("legend", {}, "Scopes"),
      scopes.map((s) => checkbox(s, { name: "key-scope", value: s, checked: s !== "ai" }))
    )
    const accountBoxes = h(
      "fieldset",
      {},
      h("legend", {}, "Restrict to accounts (none checked: every account)"),
      accounts.map((a) => checkbox(`${a.account_name} (${a.platform})`, { name: "key-account", value: String(a.id) }))
    )
    const send = h("button", { type: "submit" }, "Create key")
    return h(
      "form",
      {
        "aria-label": "Create an API key",
        onsubmit: (e) => {
          e.preventDefault()
          const chosenScopes = [...scopeBoxes.querySelectorAll("input:checked")].map((i) => i.value)
          const chosenAccounts = [...accountBoxes.querySelectorAll("input:checked")].map((i) => Number(i.value))
          busy(send, out, async () => {
            const created = await api("POST", "/dashboard/api/keys", {
              name: name.value,
              scopes: chosenScopes,
              ...(chosenAccounts.length === 0 ? {} : { account_ids: chosenAccounts })
            })
            await draw(created)
          })
        }
      },
      h("h3", {}, "New key"),
      field("Key name", name),
      scopeBoxes,
      accountBoxes,
      h("div", { class: "actions" }, send)
    )
  }
  await draw()
  return section
}

const deliveriesOf = async (webhook, into) => {
  const data = await v1("GET", `/webhooks/${webhook.id}/deliveries?limit=50`)
  const rows = (data.deliveries ?? []).map((d) =>
    h(
      "tr",
      {},
      h("td", {}, time(d.attempted_at)),
      h("td", {}, d.event),
      h("td", {}, String(d.attempt)),
      h("td", {}, d.ok ? status("ok") : status("failed")),
      h("td", {}, d.status === null ? "—" : String(d.status)),
      h("td", {}, `${d.duration_ms} ms`),
      h(
        "td",
        { class: "content" },
        d.error ? h("span", { class: "error" }, d.error) : (d.response_body || h("span", { class: "muted" }, "(empty)"))
      )
    )
  )
  replace(
    into,
    rows.length === 0
      ? notice("No deliveries yet.")
      : table(["When", "Event", "Attempt", "Result", "Status", "Time", "Receiver's answer"], rows, "Delivery log")
  )
}

const webhooksSection = async () => {
  const section = h("section", { "aria-labelledby": "webhooks-h" })
  const out = h("div", { "aria-live": "polite" })
  const draw = async (created) => {
    const hooks = (await v1("GET", "/webhooks")).webhooks ?? []
    const cards = hooks.map((w) => {
      const log = h("div", {})
      const test = h("button", { type: "button", class: "secondary" }, "Send test")
      const result = h("div", { "aria-live": "polite" })
      test.addEventListener("click", () =>
        busy(test, result, async () => {
          const r = await v1("POST", `/webhooks/${w.id}/test`, {})
          replace(result, notice(`${r.ok ? "Delivered" : "Not delivered"}: ${r.message}`, r.ok ? "ok" : "bad"))
          await deliveriesOf(w, log)
        }))
      const show = h("button", { type: "button", class: "secondary" }, "Delivery log")
      show.addEventListener("click", () => busy(show, result, () => deliveriesOf(w, log)))
      const remove = h("button", { type: "button", class: "danger" }, "Delete")
      remove.addEventListener("click", () => {
        if (!confirm(`Delete the webhook to ${w.url} and its delivery history?`)) return
        busy(remove, out, async () => {
          await v1("DELETE", `/webhooks/${w.id}`)
          await draw()
        })
      })
      return h(
        "article",
        { class: "card", "data-webhook": w.id },
        h("h3", {}, w.name ?? w.url),
        h("p", { class: "content" }, w.url, " ", status(w.is_active ? "active" : "inactive")),
        h("p", { class: "muted" }, "Events: ", (w.events ?? []).join(", ")),
        h("div", { class: "actions" }, test, show, remove),
        result,
        log
      )
    })
    replace(
      section,
      h("h2", { id: "webhooks-h" }, "Webhooks"),
      created
        ? secretBox(`Signing secret of "${created.name ?? created.url}"`, created.secret, created.secret_warning)
        : null,
      out,
      hooks.length === 0 ? notice("No webhooks.") : cards,
      createForm()
    )
  }
  const createForm = () => {
    const url = h("input", { type: "url", name: "webhook-url", required: true, placeholder: "https://" })
    const name = h("input", { type: "text", name: "webhook-name" })
    const boxes = h(
      "fieldset",
      {},
      h("legend", {}, "Events"),
      events.map((e) => checkbox(e, { name: "webhook-event", value: e }))
    )
    const send = h("button", { type: "submit" }, "Create webhook")
    return h(
      "form",
      {
        "aria-label": "Create a webhook",
        onsubmit: (e) => {
          e.preventDefault()
          const chosen = [...boxes.querySelectorAll("input:checked")].map((i) => i.value)
          busy(send, out, async () => {
            const created = await v1("POST", "/webhooks", {
              url: url.value,
              events: chosen,
              ...(name.value ? { name: name.value } : {})
            })
            await draw(created)
          })
        }
      },
      h("h3", {}, "New webhook"),
      field("Webhook URL", url, "HTTPS; Herald signs every delivery with the secret shown after creating it."),
      field("Webhook name", name),
      boxes,
      h("div", { class: "actions" }, send)
    )
  }
  await draw()
  return section
}

const quota = (
  label,
  q
) => (q && typeof q === "object" && "used" in q
  ? [h("dt", {}, label), h("dd", {}, `${q.used} of ${q.limit ?? "unlimited"}`)]
  : null)

const usageSection = async () => {
  try {
    const me = await v1("GET", "/me")
    const usage = me.usage ?? {}
    return h(
      "section",
      { "aria-labelledby": "usage-h" },
      h("h2", { id: "usage-h" }, "Usage"),
      h(
        "dl",
        { class: "facts" },
        h("dt", {}, "Organization"),
        h("dd", {}, `${me.organization?.name ?? ""} (${me.organization?.plan ?? "—"})`),
        h("dt", {}, "Subscription"),
        h("dd", {}, me.subscription?.status ?? "—"),
        Object.entries(usage).filter(([k]) => k !== "storage").map(([k, v]) => quota(k.replaceAll("_", " "), v)),
        usage.storage
          ? [
            h("dt", {}, "storage"),
            h("dd", {}, `${usage.storage.used_bytes} bytes of ${usage.storage.limit_bytes ?? "unlimited"}`)
          ]
          : null,
        me.posts ? [h("dt", {}, "posts"), h("dd", {}, String(me.posts.total))] : null
      )
    )
  } catch (e) {
    return notice(`Usage: ${errorText(e)}`, "bad")
  }
}

const sessionSection = () => {
  const out = h("div", { "aria-live": "polite" })
  const everywhere = h("button", { type: "button", class: "danger" }, "Sign out everywhere")
  everywhere.addEventListener("click", () =>
    busy(everywhere, out, async () => {
      await api("POST", "/dashboard/api/session/revoke-all", {})
      location.assign("/sign-in?reason=signed-out")
    }))
  return h(
    "section",
    { "aria-labelledby": "session-h" },
    h("h2", { id: "session-h" }, "Sessions"),
    h("p", {}, "Ends every session of your user, in every browser."),
    everywhere,
    out
  )
}

export default async ({ session }) => {
  const accounts = await loadAccounts()
  const [keys, hooks, usage] = await Promise.all([
    keysSection(session, accounts).catch((e) => notice(`Keys: ${errorText(e)}`, "bad")),
    webhooksSection().catch((e) => notice(`Webhooks: ${errorText(e)}`, "bad")),
    usageSection()
  ])
  render("Developer", usage, keys, hooks, sessionSection())
}
