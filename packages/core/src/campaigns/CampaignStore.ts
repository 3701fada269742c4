import * as Context from "effect/Context"
import type * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { Campaign, CampaignStatus } from "./Campaign.js"
import { DomainError, type PersistenceError } from "../kernel/Errors.js"
import type { CampaignId, OrganizationId } from "../kernel/Ids.js"

/** A campaign with the number of the organization's posts that name it. */
export interface CampaignRecord {
  readonly campaign: Campaign
  readonly postCount: number
}

/** A campaign before the store has assigned its id. */
export type NewCampaign = Omit<Campaign, "id">

export interface CampaignQuery {
  readonly organizationId: OrganizationId
  readonly status?: CampaignStatus
  readonly limit: number
  readonly offset: number
}

export interface CampaignPage {
  /** Newest first. */
  readonly items: ReadonlyArray<CampaignRecord>
  readonly total: number
}

export class CampaignStore extends Context.Tag("@herald/core/workflow/CampaignStore")<CampaignStore, {
  /** Stores a new campaign and returns it with the id the store assigned (an increasing integer). */
  readonly insert: (campaign: NewCampaign) => Effect.Effect<Campaign, PersistenceError>
  readonly findById: (
    organizationId: OrganizationId,
    id: CampaignId
  ) => Effect.Effect<Option.Option<CampaignRecord>, PersistenceError>
  /**
   * Whether the campaign exists in the organization. Inside a transaction it also holds the campaign
   * until the transaction ends (on Postgres a key-share row lock; SQLite runs one write transaction at
   * a time), so a post naming it cannot commit after the campaign's delete has unlinked its posts.
   */
  readonly holdForPost: (organizationId: OrganizationId, id: CampaignId) => Effect.Effect<boolean, PersistenceError>
  readonly list: (query: CampaignQuery) => Effect.Effect<CampaignPage, PersistenceError>
  /** Replaces the campaign's own fields. */
  readonly update: (campaign: Campaign) => Effect.Effect<void, PersistenceError>
  /**
   * Deletes the campaign and clears `campaign_id` on its posts (their `updated_at` becomes `now`); the
   * number of posts cleared, or None when there was no such campaign. Run it in a transaction so both
   * happen together.
   */
  readonly delete: (
    organizationId: OrganizationId,
    id: CampaignId,
    now: DateTime.Utc
  ) => Effect.Effect<Option.Option<number>, PersistenceError>
}>() {}

/**
 * A post's `campaign_id` must name a campaign of its organization: 400 `validation_error` otherwise.
 * Used by create and edit of posts, before their transaction (so the error comes with the other
 * validation errors) and inside it (to hold the campaign until the post is written).
 */
export const requireCampaign = (
  organizationId: OrganizationId,
  id: CampaignId
): Effect.Effect<void, DomainError | PersistenceError, CampaignStore> =>
  Effect.flatMap(CampaignStore, (store) =>
    Effect.flatMap(store.holdForPost(organizationId, id), (found) => {
      if (found) return Effect.void
      const message = `campaign_id ${id} is not a campaign of this organization (GET /campaigns lists them)`
      return Effect.fail(
        DomainError.of("validation_error", message, { validation_errors: [{ path: "campaign_id", message }] })
      )
    }))
