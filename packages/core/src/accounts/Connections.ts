/**
 * What the publishing engine takes from account connections: the OAuth providers, and the renewal of
 * a token after a publish the platform refused as `auth`. Everything else is read from its own module
 * (`OAuthProviders`, `ConnectedAccounts`, `CredentialConnect`, `ConnectLinks`, `OAuthCallback`,
 * `TokenRefresh`).
 */
export { OAuthProviders } from "./OAuthProviders.js"
export { renewAfterAuthFailure } from "./TokenRefresh.js"
