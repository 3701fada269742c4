// The composer's preview: one region per targeted platform, with the text as the platform counts it
// (what fits its limit, and what is over, marked), the media as the platform lays them out (a grid
// of up to four for X and most others, a carousel for Instagram, letterboxed where an image's shape
// is outside the platform's range), the link card where the platform makes one, and the thread's
// parts. Every count comes from the server (POST /dashboard/api/text-counts, the code POST /posts
// validates with); the media rules from GET /platform-rules. Nothing here knows a platform's limit.
import { api } from "../api.js"
import { h, replace } from "../ui.js"

/** Platform names as people write them. */
export const platformNames = {
  x: "X",
  bluesky: "Bluesky",
  threads: "Threads",
  instagram: "Instagram",
  facebook: "Facebook",
  linkedin: "LinkedIn",
  tiktok: "TikTok",
  youtube: "YouTube",
  pinterest: "Pinterest",
  telegram: "Telegram",
  discord: "Discord"
}
export const platformName = (p) => platformNames[p] ?? p

const unitWords = {
  weighted_characters: "weighted characters",
  graphemes: "characters",
  characters: "characters",
  bytes: "bytes",
  utf16_units: "UTF-16 units"
}
export const unitWord = (unit) => unitWords[unit] ?? unit.replaceAll("_", " ")

/**
 * Asks the server how each text counts. `texts`: [{platform, text, has_media}]; answers the counts in
 * the same order, each {platform, limits: [{limit, unit, length, length_is_minimum, over}], fits, link_card}.
 */
export const measure = async (texts) => {
  if (texts.length === 0) return []
  const answer = await api("POST", "/dashboard/api/text-counts", { texts })
  return answer.counts
}

/** "123 / 280" for the main limit, with every other limit the text is over. */
export const countLine = (measured) => {
  const [main, ...rest] = measured.limits
  const over = measured.limits.filter((l) => l.over)
  const extra = rest.filter((l) => l.over).map((l) =>
    `, ${l.length}${l.length_is_minimum ? "+" : ""} / ${l.limit} ${unitWord(l.unit)}`
  ).join("")
  return { text: `${main.length}${main.length_is_minimum ? "+" : ""} / ${main.limit}${extra}`, over: over.length > 0 }
}

const ratioOf = (text) => {
  const [w, h_] = text.split(":").map(Number)
  return w / h_
}

/** The shape a feed shows an image in: its own, or the nearest end of the platform's range (letterboxed). */
const frameOf = (item, rule) => {
  if (!item.width || !item.height) return { ratio: null, letterboxed: false }
  const own = item.width / item.height
  const range = rule.media.aspect_ratio
  if (!range) return { ratio: own, letterboxed: false }
  const min = ratioOf(range.min)
  const max = ratioOf(range.max)
  if (own < min) return { ratio: min, letterboxed: range.min }
  if (own > max) return { ratio: max, letterboxed: range.max }
  return { ratio: own, letterboxed: false }
}

const tile = (item, rule, index, total, ownFrame) => {
  const frame = frameOf(item, rule)
  const label = item.alt_text ? item.alt_text : ""
  const picture = item.src && item.type === "image"
    ? h("img", { src: item.src, alt: label, class: frame.letterboxed ? "letterboxed" : "" })
    : h("span", { class: "placeholder" }, `${item.type}: ${item.filename}`)
  const li = h(
    "li",
    { class: "tile", "data-media": item.id, "data-letterboxed": frame.letterboxed || null },
    picture,
    total > 1 ? h("span", { class: "visually-hidden" }, ` (${index + 1} of ${total})`) : null,
    frame.letterboxed ? h("span", { class: "tile-note" }, `letterboxed to ${frame.letterboxed}`) : null
  )
  // Through the CSSOM: the policy allows no style attributes.
  // A grid of several crops each image to its cell; one image, or a carousel's, keeps the frame.
  if (frame.ratio && (total === 1 || ownFrame)) li.style.aspectRatio = String(Math.round(frame.ratio * 1000) / 1000)
  return li
}

/** The media the platform gets, laid out as it shows them, and a line for each it leaves out. */
const mediaLayout = (platform, rule, media) => {
  if (media.length === 0) return null
  const taken = media.filter((m) =>
    rule.media.kinds.includes(m.type) &&
    (!m.mime_type || rule.media.types.includes(m.mime_type) || rule.media.converted_types.includes(m.mime_type))
  )
  const left = media.filter((m) => !taken.includes(m))
  const max = rule.media.max_items
  const shown = max === null ? taken : taken.slice(0, max)
  const carousel = platform === "instagram" && shown.length > 1
  const layout = carousel ? "carousel" : `grid grid-${Math.min(shown.length, 4)}`
  return h(
    "div",
    { class: "preview-media" },
    shown.length === 0 ? null : h(
      "ul",
      {
        class: layout,
        "data-layout": carousel ? "carousel" : "grid",
        "aria-label": carousel
          ? `Carousel of ${shown.length}`
          : `${shown.length} ${shown.length === 1 ? "medium" : "media"}`
      },
      shown.map((m, i) => tile(m, rule, i, shown.length, carousel))
    ),
    max !== null && taken.length > max
      ? h(
        "p",
        { class: "error" },
        `${platformName(platform)} takes at most ${max}; the post will be refused with ${taken.length}.`
      )
      : null,
    left.map((m) => h("p", { class: "muted" }, `Not sent to ${platformName(platform)}: ${m.filename} (${m.type})`))
  )
}

const linkCard = (url) => {
  let host = url
  try {
    host = new URL(url).host
  } catch {
    // shown as written
  }
  return h(
    "div",
    { class: "link-card", "data-link-card": url },
    h("span", { class: "muted" }, "Link card"),
    h("strong", {}, host),
    h("span", { class: "muted link-url" }, url)
  )
}

/** The text, with the part past the platform's limit marked. */
const cutText = (text, measured) => {
  if (measured.fits >= text.length) return h("p", { class: "preview-text" }, text)
  return h(
    "p",
    { class: "preview-text" },
    text.slice(0, measured.fits),
    h(
      "mark",
      { class: "over", "data-over": "" },
      h("span", { class: "visually-hidden" }, "Over the limit: "),
      text.slice(measured.fits)
    )
  )
}

const countParagraph = (measured, label) => {
  const line = countLine(measured)
  const unit = unitWord(measured.limits[0].unit)
  return h(
    "p",
    { class: line.over ? "counter over" : "counter", "data-preview-count": "" },
    `${label}${line.text} ${unit}${line.over ? ": too long" : ""}`
  )
}

/**
 * Draws the previews into `container`. `post`: {platforms, rules, textFor(p), media: [{id, filename,
 * type, mime_type, width, height, src, alt_text}], parts: [string], settingFor(p, name)}; `counts`:
 * the server's answers, keyed `${platform}:${index}` (index 0 the main text, 1.. the thread's parts).
 */
export const drawPreviews = (container, post, counts) => {
  replace(
    container,
    post.platforms.length === 0 ? h("p", { class: "muted" }, "Choose an account to see how the post will look.") : null,
    post.platforms.map((platform) => {
      const rule = post.rules[platform]
      const heading = `preview-${platform}-heading`
      const text = post.textFor(platform)
      // A count of an earlier text is not shown against this one (a newer count is on its way).
      const fresh = (measured, of) => (measured && measured.text === of ? measured : undefined)
      const main = fresh(counts.get(`${platform}:0`), text)
      const threaded = rule?.threads && post.parts.length > 0
      const facebookLink = platform === "facebook" ? post.settingFor(platform, "link") : undefined
      const card = post.media.length === 0 ? (facebookLink || main?.link_card || null) : null
      return h(
        "section",
        { class: "preview card", "aria-labelledby": heading, "data-preview": platform },
        h("h3", { id: heading }, `${platformName(platform)} preview`),
        h(
          "ol",
          { class: threaded ? "thread" : "thread single" },
          h(
            "li",
            { "data-part": "0" },
            threaded ? h("p", { class: "muted part-label" }, `Part 1 of ${post.parts.length + 1}`) : null,
            main ? cutText(text, main) : h("p", { class: "preview-text" }, text),
            main ? countParagraph(main, "") : h("p", { class: "counter" }, "Counting…"),
            rule ? mediaLayout(platform, rule, post.media) : null,
            card ? linkCard(card) : null
          ),
          threaded
            ? post.parts.map((part, i) => {
              const measured = fresh(counts.get(`${platform}:${i + 1}`), part)
              return h(
                "li",
                { "data-part": String(i + 1) },
                h("p", { class: "muted part-label" }, `Part ${i + 2} of ${post.parts.length + 1}`),
                measured ? cutText(part, measured) : h("p", { class: "preview-text" }, part),
                measured ? countParagraph(measured, "") : null
              )
            })
            : null
        ),
        rule?.threads === false && post.parts.length > 0
          ? h("p", { class: "muted" }, `${platformName(platform)} publishes the first part only.`)
          : null
      )
    })
  )
}
