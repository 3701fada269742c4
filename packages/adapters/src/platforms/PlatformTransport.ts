/**
 * The HTTP client every platform call goes through (publishing, uploads, metrics, token exchanges):
 * Node's own `http`/`https` client. The fetch-based client cannot send a streamed body with a length:
 * it drops the `Content-Length` a body declares and sends `Transfer-Encoding: chunked`, which TikTok's
 * chunk `PUT` refuses and the other upload endpoints (X's APPEND, YouTube's resumable `PUT`, Pinterest's
 * upload form, LinkedIn's and Meta's upload URLs) expect. This one sends the length `MediaBytes`
 * computes, and never follows a redirect (YouTube's `308 Resume Incomplete` is an answer).
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import type * as HttpClient from "@effect/platform/HttpClient"
import type * as Layer from "effect/Layer"

export const layer: Layer.Layer<HttpClient.HttpClient> = NodeHttpClient.layer
