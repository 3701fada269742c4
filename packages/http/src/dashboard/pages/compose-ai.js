// Caption suggestions in the composer (POST /ai/generate-caption): a topic, a tone and the first
// targeted platform (whose caption limit every suggestion is held to), three variants, each one click
// from the main text. The server says whether an AI provider is configured only by answering: when
// it answers `misconfig`, the panel says so and this tab does not offer it again.
import { v1 } from "../api.js"
import { busy, field, h, replace } from "../ui.js"
import { platformName } from "./preview.js"

const unconfiguredKey = "herald.ai.unconfigured"

const unconfigured = () => {
  try {
    return sessionStorage.getItem(unconfiguredKey) === "1"
  } catch {
    return false
  }
}

/** The spec's tones (POST /ai/generate-caption `tone`). */
const tones = ["professional", "casual", "witty", "enthusiastic", "urgent", "inspirational"]

/**
 * The panel, or null when this tab has learnt that the server has no provider. `topic()`: the text to
 * start from; `platform()`: the platform to fit (or null); `use(text)`: puts a suggestion in the post.
 */
export const captionSuggestions = ({ topic, platform, use }) => {
  if (unconfigured()) return null
  const out = h("div", { "aria-live": "polite" })
  const topicInput = h("textarea", { rows: "2", name: "ai-topic" })
  const tone = h(
    "select",
    { name: "ai-tone" },
    tones.map((t) => h("option", { value: t }, `${t[0].toUpperCase()}${t.slice(1)}`))
  )
  const results = h("ol", { class: "suggestions", id: "suggestions" })
  const ask = h("button", { type: "button", class: "secondary" }, "Suggest captions")
  const panel = h(
    "details",
    { class: "card", id: "ai-captions" },
    h("summary", {}, "Suggest captions with AI"),
    field("What the post is about", topicInput, "Each suggestion costs one AI credit.", "topic"),
    field("Tone", tone, undefined, "tone"),
    ask,
    out,
    results
  )
  panel.addEventListener("toggle", () => {
    if (panel.open && topicInput.value.trim() === "") topicInput.value = topic().slice(0, 1000)
  })
  ask.addEventListener("click", () =>
    busy(ask, out, async () => {
      const target = platform()
      let answer
      try {
        answer = await v1("POST", "/ai/generate-caption", {
          topic: topicInput.value,
          tone: tone.value,
          platform: target,
          count: 3
        })
      } catch (e) {
        if (e?.code !== "misconfig") throw e
        try {
          sessionStorage.setItem(unconfiguredKey, "1")
        } catch {
          // Storage refused: the panel is offered again next time.
        }
        replace(
          panel,
          h("summary", {}, "Suggest captions with AI"),
          h(
            "p",
            { class: "muted", role: "status" },
            "This server has no AI provider configured, so there are no suggestions."
          )
        )
        panel.open = true
        return
      }
      replace(
        results,
        answer.variants.map((v, i) => {
          const take = h(
            "button",
            { type: "button", class: "secondary", "aria-label": `Use suggestion ${i + 1}` },
            "Use this"
          )
          take.addEventListener("click", () => use(v.text))
          return h(
            "li",
            { "data-suggestion": String(i) },
            h("p", { class: "preview-text" }, v.text),
            h(
              "p",
              { class: "counter" },
              `${v.length} / ${v.limit}${target ? ` on ${platformName(target)}` : ""}${
                v.trimmed ? " (shortened to fit)" : ""
              }`
            ),
            take
          )
        })
      )
      replace(
        out,
        h(
          "p",
          { class: "muted" },
          `${answer.credits_charged} credit${
            answer.credits_charged === 1 ? "" : "s"
          } used; ${answer.credits.remaining} left this month${answer.sandbox ? " (sandbox suggestions)" : ""}.`
        )
      )
    }, { scope: panel }))
  return panel
}
