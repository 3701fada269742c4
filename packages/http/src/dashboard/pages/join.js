// Joining an organization through an invitation link: shows who invites whom with which role, then
// takes a name and a password; the new user is signed in at once.
import { api, setCsrfToken } from "../api.js"
import { busy, field, flashNext, h, notice, render, replace } from "../ui.js"

const roleNames = { owner: "an owner", admin: "an admin", member: "a member" }

export default async () => {
  const token = new URLSearchParams(location.search).get("token")
  if (!token) {
    render("Join", notice("This link has no token. Ask whoever invited you for a new link.", "bad"))
    return
  }
  let offer
  try {
    offer = await api("POST", "/dashboard/api/invitations/preview", { token }, { allowUnauthorized: true })
  } catch (e) {
    render(
      "Join",
      notice(
        e.code === "invalid_token"
          ? "This invitation link is unknown, used, withdrawn or expired. Ask whoever invited you for a new one."
          : e.message,
        "bad"
      )
    )
    return
  }
  const out = h("div", { "aria-live": "polite" })
  const name = h("input", { type: "text", name: "name", autocomplete: "name", required: true, maxlength: "200" })
  const password = h("input", {
    type: "password",
    name: "password",
    autocomplete: "new-password",
    required: true,
    minlength: "10"
  })
  const confirm = h("input", { type: "password", name: "confirm", autocomplete: "new-password", required: true })
  const submit = h("button", { type: "submit" }, "Join")
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
          const session = await api("POST", "/dashboard/api/invitations/accept", {
            token,
            name: name.value,
            password: password.value
          }, { allowUnauthorized: true })
          setCsrfToken(session.csrf_token)
          flashNext(`Welcome to ${session.organization.name}.`)
          location.assign("/posts")
        }, { scope: form, leaving: true })
      }
    },
    h(
      "p",
      {},
      `You are invited to join ${offer.organization.name} as ${roleNames[offer.role]}. You will sign in as `,
      h("strong", {}, offer.email),
      "."
    ),
    field("Your name", name, undefined, "name"),
    field("Choose a password", password, "At least 10 characters.", "password"),
    field("Repeat the password", confirm),
    h("div", { class: "actions" }, submit)
  )
  render(`Join ${offer.organization.name}`, out, form)
}
