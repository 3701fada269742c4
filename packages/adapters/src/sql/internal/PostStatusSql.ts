/**
 * core's PostLifecycle.derivePostStatus in SQL, for queries that filter or count posts by their
 * reported status: the post list and the analytics summary use this one expression, so the two cannot
 * drift apart (they did once, when the immediate-publish rule was added to only one of them).
 *
 * It reads a post as `p` (`is_draft`, `scheduled_for`) and its destination counts as `s` (`n`,
 * `queued`, `publishing`, `published`, `failed`; NULL for a post without destinations). The rule:
 * draft flag; no destinations -> scheduled; all queued -> publishing for an immediate publish (no
 * scheduled_for), else scheduled; any publishing, or queued beside settled -> publishing; all
 * published; all failed; else partially_failed.
 */
export const derivedStatus = `CASE
          WHEN p.is_draft = 1 THEN 'draft'
          WHEN s.n IS NULL THEN 'scheduled'
          WHEN s.queued = s.n AND p.scheduled_for IS NULL THEN 'publishing'
          WHEN s.queued = s.n THEN 'scheduled'
          WHEN s.publishing > 0 OR s.queued > 0 THEN 'publishing'
          WHEN s.published = s.n THEN 'published'
          WHEN s.failed = s.n THEN 'failed'
          ELSE 'partially_failed'
        END`
