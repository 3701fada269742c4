// Team (owners and admins): the organization's people and their roles, removal, and invitations by
// link with a role. The link is shown once, when it is made; open invitations can be withdrawn.
import { api } from "../api.js"
import { busy, confirmAction, field, flash, h, notice, render, replace, table, time } from "../ui.js"

const roles = [
  ["member", "Member: writes and edits their own posts"],
  ["admin", "Admin: also reviews drafts, connects accounts and manages people"],
  ["owner", "Owner: everything, including other owners"]
]
const roleNames = { owner: "Owner", admin: "Admin", member: "Member" }

const roleSelect = (label, value, { ownerAllowed }) =>
  h(
    "select",
    { "aria-label": label, class: "team-role" },
    roles
      .filter(([role]) => ownerAllowed || role !== "owner" || value === "owner")
      .map(([role, text]) => h("option", { value: role, selected: role === value }, text.split(":")[0]))
  )

export default async ({ session }) => {
  const me = session.user
  const isOwner = me.role === "owner"
  if (me.role !== "owner" && me.role !== "admin") {
    render(
      "Team",
      notice("Only owners and admins manage the team. Ask one of them to invite someone or change a role.")
    )
    return
  }
  const out = h("div", { "aria-live": "polite" })
  const people = h("section", { "aria-labelledby": "people-heading" })
  const pending = h("section", { "aria-labelledby": "invitations-heading" })
  const linkArea = h("div", { "aria-live": "polite" })

  const email = h("input", { type: "email", name: "email", autocomplete: "off", required: true })
  const role = roleSelect("Role of the new user", "member", { ownerAllowed: isOwner })
  role.removeAttribute("aria-label")
  const inviteButton = h("button", { type: "submit" }, "Create invitation link")
  const inviteForm = h(
    "form",
    {
      onsubmit: (event) => {
        event.preventDefault()
        busy(inviteButton, out, async () => {
          const created = await api("POST", "/dashboard/api/invitations", { email: email.value, role: role.value })
          const url = `${location.origin}${created.path}`
          const link = h("input", {
            type: "text",
            readonly: true,
            value: url,
            id: "invitation-link",
            "aria-label": "Invitation link"
          })
          const copy = h("button", { type: "button", class: "secondary" }, "Copy link")
          copy.addEventListener("click", async () => {
            link.select()
            try {
              await navigator.clipboard.writeText(url)
              flash("Link copied.")
            } catch {
              flash("Select the link and copy it.")
            }
          })
          replace(
            linkArea,
            h(
              "p",
              { class: "notice ok", role: "status" },
              `Invitation for ${created.invitation.email} as ${
                roleNames[created.invitation.role]
              }. Send them this link; it works once, until `,
              time(created.invitation.expires_at),
              ". It is not shown again."
            ),
            // When SMTP is configured the server e-mails the link too, and says whether that worked.
            created.emailed
              ? h(
                "p",
                { class: "notice", id: "invitation-mail" },
                `The link was also e-mailed to ${created.invitation.email}.`
              )
              : created.email_problem
              ? h("p", { class: "notice bad", id: "invitation-mail" }, created.email_problem)
              : null,
            h("div", { class: "actions" }, link, copy)
          )
          email.value = ""
          await refresh()
          link.focus()
          link.select()
        }, { scope: inviteForm })
      }
    },
    field("Email of the person to invite", email, undefined, "email"),
    field(
      "Role",
      role,
      "Members write posts; admins also review drafts and manage accounts and people; owners can do everything."
    ),
    h("div", { class: "actions" }, inviteButton)
  )

  const userRow = (user, owners) => {
    const self = user.id === me.id
    // An admin does not change owners (only an owner grants or takes away the owner role).
    const locked = user.role === "owner" && !isOwner
    const select = roleSelect(`Role of ${user.name}`, user.role, { ownerAllowed: isOwner })
    select.disabled = locked
    select.addEventListener("change", () =>
      busy(null, out, async () => {
        try {
          await api("PATCH", `/dashboard/api/users/${user.id}`, { role: select.value })
          flash(`${user.name} is now ${roleNames[select.value].toLowerCase()}.`)
        } finally {
          await refresh()
        }
      }))
    const removeButton = h("button", { type: "button", class: "danger" }, self ? "Leave" : "Remove")
    // The only owner can neither leave nor be removed (the server refuses it too).
    removeButton.hidden = locked || (user.role === "owner" && owners === 1)
    removeButton.setAttribute("aria-label", self ? "Leave the organization" : `Remove ${user.name}`)
    removeButton.addEventListener("click", async () => {
      const question = self
        ? "Leave the organization? You are signed out and cannot come back without a new invitation."
        : `Remove ${user.name} (${user.email})? They are signed out at once; their posts stay.`
      if (!(await confirmAction(question, self ? "Leave" : "Remove"))) return
      busy(null, out, async () => {
        await api("DELETE", `/dashboard/api/users/${user.id}`)
        if (self) {
          location.assign("/sign-in")
          return
        }
        await refresh()
        flash(`Removed ${user.name}.`)
      })
    })
    return h(
      "tr",
      { "data-user": user.email },
      h("td", {}, user.name, self ? h("span", { class: "muted" }, " (you)") : null),
      h("td", {}, user.email),
      h("td", {}, select),
      h("td", {}, removeButton)
    )
  }

  const invitationRow = (invitation) => {
    const withdraw = h("button", {
      type: "button",
      class: "secondary",
      "aria-label": `Withdraw the invitation of ${invitation.email}`
    }, "Withdraw")
    withdraw.addEventListener("click", () =>
      busy(null, out, async () => {
        await api("DELETE", `/dashboard/api/invitations/${invitation.id}`)
        flash(`Withdrew the invitation of ${invitation.email}.`)
        await refresh()
      }))
    return h(
      "tr",
      { "data-invitation": invitation.email },
      h("td", {}, invitation.email),
      h("td", {}, roleNames[invitation.role]),
      h("td", {}, time(invitation.expires_at)),
      h("td", {}, withdraw)
    )
  }

  const refresh = async () => {
    const [users, invitations] = await Promise.all([
      api("GET", "/dashboard/api/users"),
      api("GET", "/dashboard/api/invitations")
    ])
    replace(
      people,
      h("h2", { id: "people-heading" }, "People"),
      table(
        ["Name", "Email", "Role", ""],
        users.data.map((u) => userRow(u, users.data.filter((x) => x.role === "owner").length))
      )
    )
    replace(
      pending,
      h("h2", { id: "invitations-heading" }, "Open invitations"),
      invitations.data.length === 0
        ? h("p", { class: "muted" }, "No open invitations.")
        : table(["Email", "Role", "Link works until", ""], invitations.data.map(invitationRow))
    )
  }

  try {
    await refresh()
  } catch (e) {
    render("Team", notice(`The team could not be loaded: ${e.message}`, "bad"))
    return
  }
  render(
    "Team",
    out,
    people,
    h(
      "section",
      { "aria-labelledby": "invite-heading" },
      h("h2", { id: "invite-heading" }, "Invite someone"),
      inviteForm,
      linkArea
    ),
    pending
  )
}
