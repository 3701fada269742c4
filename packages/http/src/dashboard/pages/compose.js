// The composer: a new post, a copy of one (`?from=<id>`), or an existing post edited in place
// (`?post=<id>`). What may change in each state is the server's rule: an edit sends only the fields
// that changed, and a refusal is shown under the field it names.
import { v1 } from "../api.js"
import {
  busy,
  checkbox,
  field,
  flashNext,
  h,
  instantOf,
  localInputValue,
  notice,
  render,
  replace,
  time,
  zone
} from "../ui.js"
import { renditionFor, settingInput, settingText, settingValue } from "./compose-parts.js"
import { clearDraft, draftKey, loadDraft, saveDraft } from "./compose-draft.js"
import { captionSuggestions } from "./compose-ai.js"
import { loadMedia, mediaSection } from "./compose-media.js"
import { threadComposer } from "./compose-thread.js"
import { countLine, drawPreviews, measure, platformName } from "./preview.js"
import { mayPublish } from "./post-actions.js"
import { accounts as loadAccounts, campaigns as loadCampaigns, settingLabel } from "./shared.js"

/** Same JSON, keys in any order. */
const sameValue = (a, b) => {
  const canonical = (v) =>
    Array.isArray(v) ? v.map(canonical) : v !== null && typeof v === "object"
      ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical(v[k])]))
      : v
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b))
}

export default async ({ session }) => {
  const query = new URLSearchParams(location.search)
  const editId = query.get("post")
  const sourceId = editId ?? query.get("from")
  const [accounts, campaigns, rules, source] = await Promise.all([
    loadAccounts(),
    loadCampaigns(),
    v1("GET", "/platform-rules").then((d) => d.platforms),
    sourceId ? v1("GET", `/posts/${encodeURIComponent(sourceId)}`) : null
  ])
  const editing = editId ? source : null
  // {id, filename, type, mime_type, status, width, height, alt_text, src}: src is what the preview shows
  const media = (source?.media_ids?.length ? await loadMedia(source.media_ids) : []).map((m) => ({
    ...m,
    src: m.public_url ?? null
  }))
  const out = h("div", { "aria-live": "polite" })

  // accounts
  const targeted = new Set(source?.account_ids ?? [])
  const picker = h(
    "fieldset",
    { "data-field": "account_ids" },
    h("legend", {}, "Accounts"),
    accounts.length === 0
      ? h("p", {}, "No connected accounts. ", h("a", { href: "/accounts" }, "Connect one"), ".")
      : accounts.map((a) =>
        checkbox(`${a.account_name} (${a.platform})${a.health?.can_post === false ? " — cannot post" : ""}`, {
          name: "account",
          value: String(a.id),
          "data-platform": a.platform,
          checked: targeted.has(a.id),
          onchange: () => update()
        })
      )
  )
  const chosen = () =>
    [...picker.querySelectorAll("input[name=account]:checked")].map((i) => ({
      id: Number(i.value),
      platform: i.dataset.platform
    }))
  const chosenPlatforms = () => [...new Set(chosen().map((a) => a.platform))]

  // text and counters
  const content = h("textarea", { name: "content", rows: "6", oninput: () => update() })
  content.value = source?.content ?? ""
  const counters = h("ul", { class: "counters", "aria-live": "polite", id: "counters" })

  // per-platform overrides
  const overrides = h("div", { id: "overrides" })
  const overrideBlocks = new Map()
  const overrideBlock = (platform) => {
    if (overrideBlocks.has(platform)) return overrideBlocks.get(platform)
    const rule = rules[platform]
    const saved = source?.platform_content?.[platform]
    const base = `platform_content.${platform}`
    const text = h("textarea", {
      name: `override-${platform}`,
      rows: "3",
      "data-override": platform,
      oninput: () => update()
    })
    // An override whose text is the main text was saved for its settings alone: its box stays empty.
    if (saved && saved.content !== source.content) text.value = saved.content
    const typeSelect = rule?.content_types
      ? h(
        "select",
        { "data-content-type": platform },
        h("option", { value: "" }, `Default${rule.default_content_type ? ` (${rule.default_content_type})` : ""}`),
        rule.content_types.map((t) =>
          h("option", { value: t.value, selected: saved?.contentType === t.value }, t.value)
        )
      )
      : null
    const settings = Object.entries(rule?.settings ?? {}).map(([name, setting]) => {
      const input = settingInput(name, setting)
      if (saved?.settings?.[name] !== undefined) input.value = settingText(saved.settings[name])
      return field(
        `${settingLabel(name)}${setting.required ? " (required)" : ""}`,
        input,
        [setting.description ?? (setting.type === "string_array" ? "Comma-separated" : undefined), `settings.${name}`]
          .filter(Boolean).join(" · "),
        `${base}.settings.${name}`
      )
    })
    // The override's own counter: its text, or the main text it falls back to, as the platform counts.
    const counter = h("p", {
      class: "counter",
      "data-counter": platform,
      id: `counter-${platform}`,
      "aria-live": "polite"
    })
    text.setAttribute("aria-describedby", counter.id)
    const block = h(
      "details",
      { class: "card", "data-platform": platform, open: saved !== undefined },
      h("summary", {}, `${platform}: own text and settings`),
      field(`Text for ${platform} (empty: the main text)`, text, undefined, `${base}.content`),
      counter,
      typeSelect ? field("Content type", typeSelect, undefined, `${base}.contentType`) : null,
      settings
    )
    overrideBlocks.set(platform, block)
    return block
  }

  const textFor = (platform) => {
    const own = overrideBlocks.get(platform)?.querySelector("[data-override]")?.value ?? ""
    return own.trim() === "" ? content.value : own
  }

  // media: uploads, the library picker, alt text
  const mediaBox = mediaSection({
    media,
    rules,
    chosenPlatforms,
    changed: () => {
      update()
      keep()
    }
  })
  const mediaList = mediaBox.list

  // the thread: further parts, for the platforms that publish them as replies
  const thread = threadComposer(source?.threadPosts ?? [], () => {
    update()
    keep()
  })
  const previews = h("div", { class: "previews", id: "previews" })
  const suggestions = captionSuggestions({
    topic: () => content.value,
    platform: () => chosenPlatforms()[0] ?? null,
    use: (text) => {
      content.value = text
      update()
      keep()
      content.focus()
    }
  })
  const threadTargets = () => chosenPlatforms().filter((p) => rules[p]?.threads)

  // campaign, time
  const campaign = h(
    "select",
    { name: "campaign_id" },
    h("option", { value: "" }, "None"),
    campaigns.map((c) => h("option", { value: String(c.id), selected: source?.campaign_id === c.id }, c.name))
  )
  const asked = query.get("at")
  const savedTime = editing?.scheduled_for ? new Date(editing.scheduled_for) : null
  const initial = savedTime ??
    (asked && !Number.isNaN(Date.parse(asked)) ? new Date(asked) : new Date(Date.now() + 3_600_000))
  const when = h("input", { type: "datetime-local", name: "scheduled_for", step: "1", value: localInputValue(initial) })

  /** A setting's value as its input holds it, in the override block of `platform`. */
  const settingFor = (platform, name) =>
    overrideBlocks.get(platform)?.querySelector(`[data-setting="${CSS.escape(name)}"]`)?.value?.trim() || undefined

  // Counting is the server's (one source of truth): each change asks it again, the latest answer wins.
  let countRequest = 0
  const counted = new Map()
  const drawCounts = () => {
    const targets = chosenPlatforms()
    replace(
      counters,
      targets.map((platform) => {
        const measured = counted.get(`${platform}:0`)
        if (!rules[platform] || !measured) return h("li", { "data-platform": platform }, `${platform}: counting…`)
        const line = countLine(measured)
        return h(
          "li",
          { class: line.over ? "over" : "", "data-platform": platform },
          `${platform}: ${line.text}${line.over ? " (too long)" : ""}`
        )
      })
    )
    for (const platform of targets) {
      const counter = overrideBlocks.get(platform)?.querySelector("[data-counter]")
      const measured = counted.get(`${platform}:0`)
      if (!counter || !measured) continue
      const own = (overrideBlocks.get(platform).querySelector("[data-override]").value ?? "").trim() !== ""
      const line = countLine(measured)
      counter.className = line.over ? "counter over" : "counter"
      counter.textContent = `${line.text}${own ? "" : " (the main text)"}${line.over ? ": too long" : ""}`
    }
    thread.showCounts(threadTargets(), (platform, i) => counted.get(`${platform}:${i + 1}`))
    drawPreviews(previews, {
      platforms: targets,
      rules,
      textFor,
      media,
      parts: thread.parts().map((p) => p.content),
      settingFor
    }, counted)
  }
  const recount = async () => {
    const mine = ++countRequest
    const hasMedia = media.length > 0
    const keys = []
    const texts = []
    for (const platform of chosenPlatforms().filter((p) => rules[p])) {
      keys.push(`${platform}:0`)
      texts.push({ platform, text: textFor(platform), has_media: hasMedia })
      if (!rules[platform].threads) continue
      thread.parts().forEach((part, i) => {
        keys.push(`${platform}:${i + 1}`)
        texts.push({ platform, text: part.content, has_media: (part.media_ids ?? []).length > 0 })
      })
    }
    try {
      const answers = await measure(texts)
      if (mine !== countRequest) return
      counted.clear()
      answers.forEach((answer, i) => counted.set(keys[i], { ...answer, text: texts[i].text }))
      drawCounts()
    } catch {
      // Counting is a help, not a gate: the server checks the post when it is sent.
    }
  }
  let timer = null
  const update = () => {
    const targets = chosenPlatforms()
    replace(overrides, targets.map(overrideBlock))
    thread.show(threadTargets().map(platformName))
    for (const list of mediaList.querySelectorAll("[data-media]")) {
      const item = media.find((m) => m.id === list.dataset.media)
      if (!item || !item.mime_type) continue
      replace(list, targets.filter((p) => rules[p]).map((p) => h("li", {}, `${p} ${renditionFor(item, rules[p])}`)))
    }
    for (const refresh of mediaList.querySelectorAll("[data-alt-refresh]")) refresh.dispatchEvent(new Event("refresh"))
    drawCounts()
    clearTimeout(timer)
    timer = setTimeout(recount, 120)
  }

  const platformContent = () => {
    const entries = {}
    for (const platform of chosenPlatforms()) {
      const block = overrideBlocks.get(platform)
      if (!block) continue
      const own = block.querySelector("[data-override]").value
      const settings = {}
      for (const input of block.querySelectorAll("[data-setting]")) {
        const value = settingValue(input)
        if (value !== undefined) settings[input.dataset.setting] = value
      }
      const type = block.querySelector("[data-content-type]")?.value ?? ""
      if (own.trim() === "" && type === "" && Object.keys(settings).length === 0) continue
      entries[platform] = {
        content: own.trim() === "" ? content.value : own,
        ...(type === "" ? {} : { contentType: type }),
        ...(Object.keys(settings).length === 0 ? {} : { settings })
      }
    }
    return entries
  }

  /** The post as the form shows it, in the request's field names. */
  const fields = () => ({
    content: content.value,
    account_ids: chosen().map((a) => a.id),
    platform_content: platformContent(),
    media_ids: media.map((m) => m.id),
    campaign_id: campaign.value === "" ? null : Number(campaign.value),
    // Without a platform that publishes threads the composer hides the parts: an edited post keeps its own.
    threadPosts: threadTargets().length === 0
      ? normalParts(editing?.threadPosts ?? [])
      : thread.parts().filter((p) => p.content.trim() !== "" || (p.media_ids ?? []).length > 0)
  })

  /** Thread parts as the composer holds them: a part without media has no `media_ids`. */
  const normalParts = (parts) =>
    parts.map((p) => ({ content: p.content, ...(p.media_ids?.length ? { media_ids: p.media_ids } : {}) }))

  const createBody = (extra) => {
    const all = fields()
    return {
      content: all.content,
      account_ids: all.account_ids,
      ...(Object.keys(all.platform_content).length === 0 ? {} : { platform_content: all.platform_content }),
      ...(all.media_ids.length === 0 ? {} : { media_ids: all.media_ids }),
      ...(all.campaign_id === null ? {} : { campaign_id: all.campaign_id }),
      ...(all.threadPosts.length === 0 ? {} : { threadPosts: all.threadPosts }),
      timezone: zone(),
      ...extra
    }
  }

  /** The fields that differ from the post being edited (a scheduled post's time among them). */
  const changes = () => {
    const all = fields()
    const before = {
      content: editing.content,
      account_ids: editing.account_ids ?? [],
      platform_content: editing.platform_content ?? {},
      media_ids: editing.media_ids ?? [],
      campaign_id: editing.campaign_id,
      threadPosts: normalParts(editing.threadPosts ?? [])
    }
    // An entry that only repeats the main text says nothing the main text does not.
    const meaningful = (entries, main) =>
      Object.fromEntries(Object.entries(entries).filter(([, e]) => e.content !== main || e.contentType || e.settings))
    all.platform_content = meaningful(all.platform_content, all.content)
    before.platform_content = meaningful(before.platform_content, before.content)
    const changed = Object.fromEntries(Object.entries(all).filter(([k, v]) => !sameValue(v, before[k])))
    // The whole set is sent, as the request takes it.
    if (changed.platform_content !== undefined) changed.platform_content = fields().platform_content
    if (!editing.draft && editing.scheduled_for !== null) {
      const at = instantOf(when)
      if (
        at !== undefined && Math.floor(Date.parse(at) / 1000) !== Math.floor(Date.parse(editing.scheduled_for) / 1000)
      ) {
        changed.scheduled_for = at
      }
    }
    return changed
  }

  const scheduled = () => {
    const at = instantOf(when)
    if (at === undefined) {
      throw Object.assign(new Error("Pick a date and time."), { details: { fields: ["scheduled_for"] } })
    }
    return { scheduled_for: at }
  }

  // Autosave: what the form holds, written on every change, offered back when the composer opens.
  const autosaveKey = draftKey(session, editId ? `post:${editId}` : sourceId ? `from:${sourceId}` : "new")
  const snapshot = () => ({
    content: content.value,
    account_ids: chosen().map((a) => a.id),
    overrides: Object.fromEntries([...overrideBlocks].map(([platform, block]) => [platform, {
      content: block.querySelector("[data-override]").value,
      contentType: block.querySelector("[data-content-type]")?.value ?? "",
      settings: Object.fromEntries(
        [...block.querySelectorAll("[data-setting]")].map((i) => [i.dataset.setting, i.value])
      )
    }])),
    media: media.map(({ id, filename, type, mime_type, status, width, height, alt_text, public_url }) => ({
      id,
      filename,
      type,
      mime_type,
      status,
      width,
      height,
      alt_text,
      public_url
    })),
    thread: thread.parts(),
    campaign_id: campaign.value,
    when: when.value
  })
  const keep = () => saveDraft(autosaveKey, snapshot())
  const restore = (state) => {
    content.value = state.content
    const ids = new Set(state.account_ids ?? [])
    for (const input of picker.querySelectorAll("input[name=account]")) input.checked = ids.has(Number(input.value))
    for (const [platform, saved] of Object.entries(state.overrides ?? {})) {
      if (!rules[platform]) continue
      const block = overrideBlock(platform)
      block.querySelector("[data-override]").value = saved.content ?? ""
      const type = block.querySelector("[data-content-type]")
      if (type) type.value = saved.contentType ?? ""
      for (const input of block.querySelectorAll("[data-setting]")) {
        input.value = saved.settings?.[input.dataset.setting] ?? ""
      }
      if ((saved.content ?? "").trim() !== "") block.open = true
    }
    mediaBox.show((state.media ?? []).map((m) => ({ ...m, src: m.public_url ?? null })))
    if (Array.isArray(state.thread)) thread.set(state.thread)
    if (state.campaign_id !== undefined) campaign.value = state.campaign_id
    // A time asked for by the link (a calendar slot's "+ New") wins over the kept one.
    if (state.when && !(asked && editing === null)) when.value = state.when
  }

  const form = h("form", { onsubmit: (e) => e.preventDefault(), "aria-label": "Post", oninput: keep, onchange: keep })
  const button = (label, run, cls = "secondary") => {
    const el = h("button", { type: "button", class: cls, "data-action": label }, label)
    el.addEventListener("click", () => busy(el, out, run, { leaving: true, scope: form }))
    return el
  }
  const leaveTo = (id, message) => {
    clearDraft(autosaveKey)
    flashNext(message)
    location.assign(`/posts/${id}`)
  }
  /** Alt texts being stored on their media finish before the post is sent. */
  const altSaved = () => Promise.all(media.map((m) => m.altSaving).filter(Boolean))
  const create = (label, extra, cls, message) =>
    button(label, async () => {
      await altSaved()
      const made = await v1("POST", "/posts", createBody(extra()))
      leaveTo(made.id ?? made.post_id, message)
    }, cls)
  /** Saves the edit (when anything changed), then schedules the draft as `body()` says. */
  const saveThen = (label, body, cls, message) =>
    button(label, async () => {
      await altSaved()
      const changed = changes()
      const next = body?.()
      if (Object.keys(changed).length > 0) await v1("PATCH", `/posts/${editing.id}`, changed)
      if (next !== undefined) await v1("POST", `/posts/${editing.id}/schedule`, next)
      leaveTo(editing.id, message)
    }, cls)

  const actions = editing === null
    ? [
      create("Schedule", scheduled, "", "Scheduled."),
      create("Publish now", () => ({}), "secondary", "Publishing now."),
      create("Add to queue", () => ({ use_queue: true }), "secondary", "Added to the queue."),
      create("Save draft", () => ({ draft: true }), "secondary", "Draft saved."),
      create("Request approval", () => ({ draft: true, request_approval: true }), "secondary", "Sent for approval.")
    ]
    : editing.draft
    ? [
      saveThen("Save draft", undefined, "", "Draft saved."),
      mayPublish(editing)
        ? saveThen("Schedule", () => ({ ...scheduled(), timezone: zone() }), "secondary", "Scheduled.")
        : null,
      mayPublish(editing)
        ? saveThen("Publish now", () => ({ publish_now: true }), "secondary", "Publishing now.")
        : null,
      mayPublish(editing)
        ? saveThen("Add to queue", () => ({ use_queue: true }), "secondary", "Added to the queue.")
        : null
    ]
    : [saveThen("Save changes", undefined, "", "Changes saved.")]

  const timeLabel = editing === null || editing.draft
    ? `Schedule for (your zone, ${zone()})`
    : `Scheduled for (your zone, ${zone()})`
  const showTime = editing === null || editing.draft || editing.scheduled_for !== null
  replace(
    form,
    picker,
    field("Text", content, undefined, "content"),
    counters,
    suggestions,
    thread.element,
    overrides,
    h(
      "fieldset",
      { "data-field": "media_ids" },
      h("legend", {}, "Media"),
      mediaBox.dropzone,
      mediaBox.libraryPicker,
      mediaList
    ),
    h(
      "section",
      { "aria-labelledby": "previews-heading", class: "previews-wrap" },
      h("h2", { id: "previews-heading" }, "Preview"),
      previews
    ),
    field("Campaign", campaign, undefined, "campaign_id"),
    showTime ? field(timeLabel, when, undefined, "scheduled_for") : null,
    h("div", { class: "actions", "data-field": "use_queue" }, actions)
  )
  const title = editing === null ? (source ? "Compose a copy" : "Compose") : editing.draft ? "Edit draft" : "Edit post"
  render(
    title,
    editing
      ? h(
        "p",
        {},
        h("a", { href: `/posts/${editing.id}` }, "Back to the post"),
        editing.draft
          ? null
          : h(
            "span",
            { class: "muted" },
            " · Published copies are not edited on the platforms; only what is still to be sent changes."
          )
      )
      : null,
    out,
    form
  )
  const kept = loadDraft(autosaveKey)
  if (kept !== null) {
    restore(kept)
    const discard = h("button", { type: "button", class: "secondary" }, "Discard it")
    discard.addEventListener("click", () => {
      clearDraft(autosaveKey)
      location.reload()
    })
    replace(
      out,
      h(
        "div",
        { class: "notice", role: "status", id: "restored" },
        "Restored your unsaved work from ",
        time(kept.saved_at),
        ". ",
        discard
      )
    )
  }
  update()
  if (accounts.length === 0) replace(out, notice("Connect an account before composing.", ""))
}
