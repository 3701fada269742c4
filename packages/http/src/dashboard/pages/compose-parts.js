// The composer's pieces that hold no page state: the input for each platform setting and its value,
// what each platform gets of a file, and uploads with progress. (Counting text is the server's: see
// preview.js.)
import { h } from "../ui.js"

export const settingInput = (name, setting) => {
  const common = { name, "data-setting": name, "data-type": setting.type }
  switch (setting.type) {
    case "enum":
      return h(
        "select",
        common,
        h("option", { value: "" }, "Platform default"),
        (setting.values ?? []).map((v) => h("option", { value: v }, v))
      )
    case "boolean":
      return h(
        "select",
        common,
        h("option", { value: "" }, "Platform default"),
        h("option", { value: "true" }, "Yes"),
        h("option", { value: "false" }, "No")
      )
    case "integer":
      return h("input", {
        ...common,
        type: "number",
        step: "1",
        ...(setting.minimum === undefined ? {} : { min: setting.minimum })
      })
    default:
      return h("input", {
        ...common,
        type: setting.type === "url" ? "url" : "text",
        ...(setting.max_length ? { maxlength: setting.max_length } : {})
      })
  }
}

export const settingValue = (input) => {
  const value = input.value.trim()
  if (value === "") return undefined
  switch (input.dataset.type) {
    case "boolean":
      return value === "true"
    case "integer":
      return Number(value)
    case "string_array":
      return value.split(",").map((s) => s.trim()).filter((s) => s !== "")
    default:
      return value
  }
}

const megabytes = (bytes) => `${Math.round((bytes / 1_048_576) * 10) / 10} MB`

/**
 * What each targeted platform will get of a file: JPEG, PNG and WebP always leave through a re-encoded
 * rendition (it drops their metadata), types a platform does not take become a JPEG, GIFs, videos and
 * documents go as they are; or nothing, when the platform does not take the file at all.
 */
export const renditionFor = (media, rule) => {
  if (!rule.media.kinds.includes(media.type)) return `does not take ${media.type}s`
  if (rule.media.converted_types.includes(media.mime_type)) return "gets a JPEG rendition"
  if (!rule.media.types.includes(media.mime_type)) return `does not take ${media.mime_type}`
  const still = ["image/jpeg", "image/png", "image/webp"].includes(media.mime_type)
  if (!still) return "gets the file as is"
  const cap = rule.media.max_bytes?.image ? `, at most ${megabytes(rule.media.max_bytes.image)}` : ""
  const ratio = rule.media.aspect_ratio
    ? `, letterboxed outside ${rule.media.aspect_ratio.min} to ${rule.media.aspect_ratio.max}`
    : ""
  return `gets a re-encoded ${media.mime_type.slice(6).toUpperCase()} without metadata${cap}${ratio}`
}

/** PUT with upload progress (fetch has none). */
export const put = (url, file, headers, onProgress) =>
  new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    xhr.open("PUT", url)
    for (const [k, v] of Object.entries(headers ?? {})) xhr.setRequestHeader(k, v)
    xhr.upload.addEventListener("progress", (e) => e.lengthComputable && onProgress(e.loaded / e.total))
    xhr.addEventListener("load", () => {
      if (xhr.status >= 200 && xhr.status < 300) resolve()
      else {
        let message = `upload answered ${xhr.status}`
        try {
          message = JSON.parse(xhr.responseText).error.message
        } catch {
          // not an envelope
        }
        reject(new Error(message))
      }
    })
    xhr.addEventListener("error", () => reject(new Error("the upload failed (network)")))
    xhr.send(file)
  })

/** A setting's stored value as its input shows it (the reverse of `settingValue`). */
export const settingText = (value) =>
  Array.isArray(value)
    ? value.join(", ")
    : typeof value === "boolean"
    ? String(value)
    : value === null || value === undefined
    ? ""
    : String(value)
