/**
 * What a person of the organization may do, by role. Owners and admins may do everything; a member
 * reads, writes posts (creating any, changing only their own), uploads and edits media, organizes
 * campaigns and uses AI. Connecting and disconnecting accounts, webhooks, API keys, users, reviewing
 * posts and removing shared things (media, campaigns) are for owners and admins.
 *
 * This bounds people, i.e. browser sessions. An API key is an organization credential (spec,
 * Authentication rule 2: only owners and admins create keys), bounded by its scopes and accounts.
 */
import * as Option from "effect/Option"
import type { UserId } from "../kernel/Ids.js"
import type { Role } from "./Organization.js"

export type Action =
  /** Every GET of /api/v1. */
  | "read"
  /** POST /posts, bulk create and bulk schedule. */
  | "create_posts"
  /** Edit, schedule, retry or delete one post: any post for owners and admins, their own for members. */
  | "change_post"
  /** Retry every failed post matching filters, whoever created them. */
  | "retry_all_posts"
  /** Approve or request changes. */
  | "review_posts"
  | "upload_media"
  | "delete_media"
  | "organize_campaigns"
  | "delete_campaigns"
  | "use_ai"
  /** Connect, reconnect and disconnect social accounts. */
  | "manage_accounts"
  | "manage_webhooks"
  /** Create and revoke API keys, approve device logins. */
  | "manage_keys"
  /** List and manage the organization's users and settings. */
  | "manage_organization"

export const actions: ReadonlyArray<Action> = [
  "read",
  "create_posts",
  "change_post",
  "retry_all_posts",
  "review_posts",
  "upload_media",
  "delete_media",
  "organize_campaigns",
  "delete_campaigns",
  "use_ai",
  "manage_accounts",
  "manage_webhooks",
  "manage_keys",
  "manage_organization"
]

const memberActions: ReadonlySet<Action> = new Set<Action>([
  "read",
  "create_posts",
  "change_post",
  "upload_media",
  "organize_campaigns",
  "use_ai"
])

export const isOwnerOrAdmin = (role: Role): boolean => role === "owner" || role === "admin"

/** Whether the role may take the action at all (`change_post` for a member: on their own posts). */
export const can = (role: Role, action: Action): boolean => isOwnerOrAdmin(role) || memberActions.has(action)

/**
 * Whether the user may change this post: owners and admins any post; a member one they created. A
 * post whose creator is not known is not a member's.
 */
export const canChangePost = (
  user: { readonly id: UserId; readonly role: Role },
  createdBy: Option.Option<UserId>
): boolean => isOwnerOrAdmin(user.role) || (Option.isSome(createdBy) && createdBy.value === user.id)
