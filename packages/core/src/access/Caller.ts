import type * as ApiKey from "./ApiKey.js"

/** The caller: an API key (its organization, account restriction and creating user). */
export interface Caller {
  readonly key: ApiKey.ApiKey
}
