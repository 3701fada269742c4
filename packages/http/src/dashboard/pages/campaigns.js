// Campaigns: create one with a name and a colour, rename or recolour it, archive it (its posts stay
// grouped) or bring it back; each links to its posts.
import { v1 } from "../api.js"
import { busy, field, flash, h, notice, render, replace, table } from "../ui.js"

const defaultColour = "#0a58ca"

/** Every campaign, newest first (the list pages 100 at a time). */
const loadAll = async () => {
  const all = []
  for (let offset = 0;; offset += 100) {
    const data = await v1("GET", `/campaigns?limit=100&offset=${offset}`)
    all.push(...(data.campaigns ?? []))
    if (!data.pagination?.has_more) return all
  }
}

export default async function page() {
  const out = h("div", { "aria-live": "polite" })
  const listArea = h("div", { id: "campaigns" })

  const row = (c) => {
    const name = h("input", {
      type: "text",
      name: "name",
      value: c.name,
      maxlength: "100",
      required: true,
      "aria-label": `Name of ${c.name}`
    })
    const colour = h("input", {
      type: "color",
      name: "color",
      value: c.color ?? defaultColour,
      "aria-label": `Colour of ${c.name}`
    })
    const save = h("button", { type: "button", class: "secondary" }, "Save")
    const archived = c.status === "archived"
    // Set through the CSSOM, which the page's CSP allows (an inline style attribute it would not).
    const swatch = h("span", { class: "swatch", "aria-hidden": "true" })
    swatch.style.backgroundColor = c.color ?? "transparent"
    const toggle = h("button", { type: "button", class: "secondary" }, archived ? "Restore" : "Archive")
    const tr = h(
      "tr",
      { "data-campaign": String(c.id), class: archived ? "archived" : "" },
      h("td", { "data-field": "name" }, swatch, name),
      h("td", { "data-field": "color" }, colour),
      h("td", {}, archived ? "archived" : "active"),
      h(
        "td",
        {},
        h("a", {
          href: `/posts?campaign_id=${c.id}`,
          "aria-label": `${c.post_count} post${c.post_count === 1 ? "" : "s"} in ${c.name}`
        }, String(c.post_count))
      ),
      h("td", {}, h("div", { class: "actions" }, save, toggle))
    )
    const patch = (body, message) =>
      busy(null, out, async () => {
        await v1("PATCH", `/campaigns/${c.id}`, body)
        flash(message)
        await refresh()
      }, { scope: tr })
    save.addEventListener("click", () => {
      const body = {}
      if (name.value.trim() !== c.name) body.name = name.value
      if (colour.value !== (c.color ?? defaultColour)) body.color = colour.value
      if (Object.keys(body).length === 0) return flash("Nothing to save.")
      patch(body, `Saved ${name.value.trim()}.`)
    })
    toggle.addEventListener(
      "click",
      () =>
        patch({ status: archived ? "active" : "archived" }, archived ? `Restored ${c.name}.` : `Archived ${c.name}.`)
    )
    return tr
  }

  const refresh = async () => {
    const list = await loadAll()
    replace(
      listArea,
      list.length === 0
        ? notice("No campaigns yet.")
        : table(
          ["Name", "Colour", "Status", "Posts", ""],
          list.map(row),
          `${list.length} campaign${list.length === 1 ? "" : "s"}`
        )
    )
  }

  const newName = h("input", { type: "text", name: "name", maxlength: "100", required: true })
  const newColour = h("input", { type: "color", name: "color", value: defaultColour })
  const create = h("button", { type: "submit" }, "Create campaign")
  const form = h(
    "form",
    {
      "aria-label": "New campaign",
      class: "inline-form",
      onsubmit: (e) => {
        e.preventDefault()
        busy(create, out, async () => {
          const made = await v1("POST", "/campaigns", { name: newName.value, color: newColour.value })
          newName.value = ""
          flash(`Created ${made.name}.`)
          await refresh()
        }, { scope: form })
      }
    },
    field("Name", newName, undefined, "name"),
    field("Colour", newColour, undefined, "color"),
    h("div", { class: "actions" }, create)
  )
  await refresh()
  render("Campaigns", h("h2", {}, "New campaign"), out, form, h("h2", {}, "All campaigns"), listArea)
}
