// The posting queue: its zone and weekly openings (owners and admins change them), and where the
// next queued posts will land, in the viewer's zone with the queue's wall clock beside it.
import { api, v1 } from "../api.js"
import { isReviewer } from "../app.js"
import { busy, field, flash, h, notice, render, replace, zone, zonedTime } from "../ui.js"

const weekdays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

const zones = () => {
  try {
    return Intl.supportedValuesOf("timeZone")
  } catch {
    return []
  }
}

const forecastList = (queue) =>
  queue.forecast.length === 0
    ? notice(queue.message ?? "No opening ahead.")
    : h(
      "ol",
      { id: "forecast" },
      queue.forecast.map((entry) => h("li", {}, zonedTime(entry.scheduled_for, queue.timezone)))
    )

export default async function page({ session }) {
  const editable = isReviewer(session)
  let queue = await v1("GET", "/queue?count=10")
  const out = h("div", { "aria-live": "polite" })
  const forecast = h("section", { "aria-labelledby": "forecast-title" })
  const showForecast = () =>
    replace(forecast, h("h2", { id: "forecast-title" }, "Where the next queued posts land"), forecastList(queue))

  const zoneInput = h("input", {
    type: "text",
    name: "timezone",
    list: "zones",
    autocomplete: "off",
    required: true,
    value: queue.timezone ?? zone(),
    disabled: !editable
  })
  const rows = h("ol", { class: "openings", id: "openings" })
  /** Each opening is named by its place in the list ("Day of opening 2"), renamed when one goes. */
  const renumber = () =>
    [...rows.children].forEach((li, i) => {
      li.querySelector("select").setAttribute("aria-label", `Day of opening ${i + 1}`)
      li.querySelector("input").setAttribute("aria-label", `Time of opening ${i + 1}`)
      li.querySelector("button")?.setAttribute("aria-label", `Remove opening ${i + 1}`)
    })
  const row = (opening) => {
    const day = h(
      "select",
      { name: "weekday", disabled: !editable },
      weekdays.map((name, i) => h("option", { value: String(i + 1), selected: opening.weekday_number === i + 1 }, name))
    )
    const time = h("input", { type: "time", name: "time", value: opening.time, required: true, disabled: !editable })
    const remove = editable ? h("button", { type: "button", class: "link" }, "Remove") : null
    const item = h("li", { class: "opening" }, day, " ", time, " ", remove)
    remove?.addEventListener("click", () => {
      const next = item.nextElementSibling ?? item.previousElementSibling
      item.remove()
      renumber()
      ;(next?.querySelector("select") ?? add).focus()
    })
    return item
  }
  for (const opening of queue.openings) rows.append(row(opening))
  renumber()
  const add = h("button", { type: "button", class: "secondary" }, "Add opening")
  add.addEventListener("click", () => {
    const last = rows.lastElementChild
    const item = row({
      weekday_number: last ? Number(last.querySelector("select").value) : 1,
      time: last ? last.querySelector("input").value : "09:00"
    })
    rows.append(item)
    renumber()
    item.querySelector("select").focus()
  })
  const save = h("button", { type: "submit" }, "Save queue")
  const form = h(
    "form",
    {
      "aria-label": "Queue",
      onsubmit: (e) => {
        e.preventDefault()
        const openings = [...rows.querySelectorAll("li")].map((li) => ({
          weekday_number: Number(li.querySelector("select").value),
          time: li.querySelector("input").value.slice(0, 5)
        }))
        busy(save, out, async () => {
          queue = await api("PUT", "/dashboard/api/queue", { timezone: zoneInput.value.trim(), openings })
          replace(rows, queue.openings.map(row))
          renumber()
          showForecast()
          flash("Queue saved.")
        }, { scope: form })
      }
    },
    field(
      "Time zone of the openings",
      zoneInput,
      "An IANA zone, e.g. Europe/Berlin. The openings are wall-clock times there, through daylight-saving changes.",
      "timezone"
    ),
    h("datalist", { id: "zones" }, zones().map((z) => h("option", { value: z }))),
    h(
      "fieldset",
      { "data-field": "openings" },
      h("legend", {}, "Weekly openings"),
      editable ? h("p", { class: "muted" }, "Each opening takes one queued post.") : null,
      rows,
      editable ? add : null
    ),
    editable ? h("div", { class: "actions" }, save) : null
  )
  showForecast()
  render(
    "Queue",
    editable ? null : notice("Only owners and admins change the queue."),
    queue.configured ? null : notice("This organization has no queue yet: add openings and save."),
    out,
    form,
    forecast
  )
}
