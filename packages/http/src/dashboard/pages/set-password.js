import { api } from "../api.js"
import { busy, field, h, notice, render, replace } from "../ui.js"

export default async () => {
  const token = new URLSearchParams(location.search).get("token")
  if (!token) {
    render(
      "Set your password",
      notice("This link has no token. Ask the owner for a new one (herald users reset-password).", "bad")
    )
    return
  }
  const out = h("div", { "aria-live": "polite" })
  const password = h("input", { type: "password", name: "password", autocomplete: "new-password", required: true })
  const confirm = h("input", { type: "password", name: "confirm", autocomplete: "new-password", required: true })
  const submit = h("button", { type: "submit" }, "Set password")
  const form = h(
    "form",
    {
      onsubmit: (event) => {
        event.preventDefault()
        if (password.value !== confirm.value) {
          replace(out, notice("The two passwords differ.", "bad"))
          confirm.focus()
          return
        }
        busy(submit, out, async () => {
          await api("POST", "/dashboard/api/password", { token, password: password.value }, { allowUnauthorized: true })
          form.remove()
          replace(out, notice("Your password is set.", "ok"), h("p", {}, h("a", { href: "/sign-in" }, "Sign in")))
        })
      }
    },
    field("New password", password),
    field("Repeat the password", confirm),
    h("div", { class: "actions" }, submit)
  )
  render("Set your password", out, form)
}
