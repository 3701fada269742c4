/**
 * Connecting a credential platform (Telegram, Discord, Bluesky): the credentials are validated live
 * through the platform's client, then the account is saved.
 */
import { refusal, saveIdentity } from "./ConnectedAccounts.js"
import { DomainError } from "../kernel/Errors.js"
import type { OrganizationId } from "../kernel/Ids.js"
import type { CredentialPlatform } from "../domain/Platform.js"
import { Platforms } from "../platforms/Platforms.js"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

const requiredFields: Record<CredentialPlatform, ReadonlyArray<string>> = {
  telegram: ["bot_token", "channel"],
  discord: ["webhook_url"],
  bluesky: ["handle", "app_password"]
}

export const credentialInstructions: Record<CredentialPlatform, string> = {
  telegram: "The bot posts to the channel; keep it an administrator with the right to post messages. " +
    "To change the bot or channel, submit the credentials again.",
  discord: "Posts go to the webhook's channel. If the webhook is deleted or its token reset, submit the new URL again.",
  bluesky: "Herald signs in with the app password and keeps the session fresh. If you revoke the app password, " +
    "submit a new one to reconnect."
}

export interface CredentialConnect {
  readonly organizationId: OrganizationId
  readonly platform: CredentialPlatform
  /** The credential fields as sent; a number (a Telegram numeric chat id) is given to the client as its decimal text. */
  readonly input: Readonly<Record<string, string | number | undefined>>
}

/** Validates the credentials live through the platform client, then saves the account. */
export const connectWithCredentials = (request: CredentialConnect) =>
  Effect.gen(function*() {
    const missing = requiredFields[request.platform].filter((field) => String(request.input[field] ?? "").trim() === "")
    if (missing.length > 0) {
      return yield* DomainError.fail(
        "validation_error",
        `${request.platform} needs ${requiredFields[request.platform].join(" and ")}`,
        { validation_errors: missing.map((path) => ({ path, message: `${path} is required for ${request.platform}` })) }
      )
    }
    const client = (yield* Platforms).get(request.platform)
    if (Option.isNone(client) || client.value.connectWithCredentials === undefined) {
      return yield* DomainError.fail("misconfig", `Connecting ${request.platform} is not available on this server`)
    }
    const input: Record<string, string> = {}
    for (const [key, value] of Object.entries(request.input)) if (value !== undefined) input[key] = String(value)
    const identity = yield* client.value.connectWithCredentials(input).pipe(Effect.mapError(refusal))
    return yield* saveIdentity(request.organizationId, request.platform, identity, "credential")
  }).pipe(Effect.withSpan("Connections.connectWithCredentials", { attributes: { platform: request.platform } }))
