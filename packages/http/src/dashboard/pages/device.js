import { api } from "../api.js"
import { busy, field, h, notice, render, status, time } from "../ui.js"

const codeForm = (value = "") => {
  const input = h("input", {
    type: "text",
    name: "code",
    autocomplete: "off",
    placeholder: "XXXX-XXXX",
    required: true,
    value,
    autocapitalize: "characters"
  })
  return h(
    "form",
    { method: "get", action: "/device" },
    field("Code shown by the device", input),
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Look up"))
  )
}

export default async function page() {
  const code = (new URLSearchParams(location.search).get("code") ?? "").trim().toUpperCase()
  if (code === "") {
    render("Device login", h("p", {}, "A program asked to sign in to Herald. Enter the code it shows."), codeForm())
    return
  }
  let request
  try {
    request = await api("GET", `/dashboard/api/device/${encodeURIComponent(code)}`)
  } catch (e) {
    render(
      "Device login",
      notice(
        e.status === 404
          ? `No device login has the code ${code}. Check the code the device shows, or start again on the device.`
          : e.message,
        "bad"
      ),
      codeForm(code)
    )
    return
  }
  const out = h("div", { "aria-live": "polite" })
  const decide = (verb) => {
    const button = h(
      "button",
      { type: "button", class: verb === "approve" ? "" : "danger" },
      verb === "approve" ? "Approve" : "Deny"
    )
    button.addEventListener("click", () =>
      busy(button, out, async () => {
        await api("POST", `/dashboard/api/device/${encodeURIComponent(code)}/${verb}`, {})
        await page()
        document.getElementById("main").prepend(
          notice(
            verb === "approve" ? "Approved: the device receives its key on its next poll." : "Denied.",
            verb === "approve" ? "ok" : ""
          )
        )
      }))
    return button
  }
  const pending = request.status === "pending"
  render(
    pending ? "Approve this device?" : "Device login",
    h(
      "dl",
      { class: "facts" },
      h("dt", {}, "Program"),
      h("dd", { id: "device-client" }, request.client_name ?? "A device (no name given)"),
      h("dt", {}, "Code"),
      h("dd", {}, h("code", {}, request.user_code)),
      h("dt", {}, "Access"),
      h("dd", {}, (request.scopes ?? []).join(", ") || "—"),
      h("dt", {}, "State"),
      h("dd", { id: "device-status" }, status(request.status)),
      h("dt", {}, "Expires"),
      h("dd", {}, time(request.expires_at))
    ),
    pending
      ? [
        h(
          "p",
          {},
          "Approve only if you started this login and the device shows the same code. It gets an API key of your organization."
        ),
        h("div", { class: "actions" }, decide("approve"), decide("deny"))
      ]
      : null,
    out
  )
}
