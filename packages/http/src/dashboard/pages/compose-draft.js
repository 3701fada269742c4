// The composer's work in progress, kept in this browser's localStorage under the signed-in user and
// organization (and the post being edited, if any), so a session that ends, a closed tab or a crash
// loses nothing: the composer offers it back when it opens again. Saving or creating the post, or
// Discard, removes it.

const prefix = "herald.compose"

/** One key per user, organization and composer target ("new", "post:<id>", "from:<id>"). */
export const draftKey = (session, target) => `${prefix}:${session.organization.id}:${session.user.id}:${target}`

export const loadDraft = (key) => {
  try {
    const value = JSON.parse(localStorage.getItem(key) ?? "null")
    return value !== null && typeof value === "object" && typeof value.content === "string" ? value : null
  } catch {
    return null
  }
}

export const saveDraft = (key, state) => {
  try {
    localStorage.setItem(key, JSON.stringify({ ...state, saved_at: new Date().toISOString() }))
  } catch {
    // Storage full or refused: the form still works, it is only not kept.
  }
}

export const clearDraft = (key) => {
  try {
    localStorage.removeItem(key)
  } catch {
    // Storage refused: nothing was kept.
  }
}
