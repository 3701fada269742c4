import { api } from "../api.js"
import { safeNext } from "../next.js"
import { busy, field, h, notice, render } from "../ui.js"

const reasons = {
  expired: "Your session has ended. Sign in again to continue.",
  "signed-out": "You are signed out."
}

export default async ({ session }) => {
  const query = new URLSearchParams(location.search)
  const next = safeNext(query.get("next"), location.origin)
  if (session !== null && query.get("reason") === null) {
    location.replace(next)
    return
  }
  const out = h("div", { "aria-live": "polite" })
  const email = h("input", { type: "email", name: "email", autocomplete: "username", required: true })
  const password = h("input", { type: "password", name: "password", autocomplete: "current-password", required: true })
  const submit = h("button", { type: "submit" }, "Sign in")
  const form = h(
    "form",
    {
      onsubmit: (event) => {
        event.preventDefault()
        busy(submit, out, async () => {
          await api("POST", "/dashboard/api/session", { email: email.value, password: password.value }, {
            allowUnauthorized: true
          })
          location.assign(next)
        })
      }
    },
    field("Email", email),
    field("Password", password),
    h("div", { class: "actions" }, submit)
  )
  const reason = reasons[query.get("reason")]
  render("Sign in", reason ? notice(reason) : null, out, form)
  email.focus()
}
