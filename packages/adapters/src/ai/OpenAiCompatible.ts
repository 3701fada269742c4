/**
 * The AI provider adapter: the OpenAI-compatible HTTP API that OpenAI, Azure OpenAI (v1 API),
 * Ollama, vLLM and LM Studio serve. Captions through `POST {base}/chat/completions` (one call, the
 * model asked for a JSON object `{"captions": [...]}`), images through `POST {base}/images/generations`
 * with `response_format: "b64_json"`.
 *
 * Failures: the provider's safety filter (HTTP 400 with `error.code` `content_policy_violation`,
 * `content_filter` or `moderation_blocked`; a choice with `finish_reason: "content_filter"`; a
 * `refusal`) is `rejected`; 401/403 (the key) is `unconfigured`; 429, 5xx, network errors, time-outs
 * and answers that do not parse are `failed`. The API key is held `Redacted`, sent only in the
 * Authorization header, and never written to a log or an error message.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import {
  CaptionGenerationError,
  CaptionGenerator,
  type CaptionRequest,
  type GenerationFailure
} from "@herald/core/ai/CaptionGenerator"
import { ImageGenerationError, ImageGenerator, type ImageModel, providerSize } from "@herald/core/ai/ImageGenerator"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"

export const provider = "openai-compatible"

export interface Config {
  /** The API root including its version path, as the OpenAI SDKs take it: `https://api.openai.com/v1`. */
  readonly baseUrl: string
  readonly apiKey: Option.Option<Redacted.Redacted<string>>
  readonly captionModel: string
  /** The provider model behind each of Herald's image models. */
  readonly imageModels: Readonly<Record<ImageModel, string>>
  readonly timeout: Duration.Duration
}

export const defaultCaptionModel = "gpt-4o-mini"
export const defaultImageModel = "gpt-image-1"
export const defaultTimeoutSeconds = 120

/** A root given without a path (`http://localhost:11434`) gets `/v1`; a trailing slash is dropped. */
export const normalizeBaseUrl = (raw: string): string => {
  const trimmed = raw.trim().replace(/\/+$/, "")
  try {
    const url = new URL(trimmed)
    return url.pathname === "/" || url.pathname === "" ? `${trimmed}/v1` : trimmed
  } catch {
    return trimmed
  }
}

/**
 * The provider from the environment: `HERALD_AI_BASE_URL` (none: no provider), `HERALD_AI_API_KEY`,
 * `HERALD_AI_CAPTION_MODEL` (default gpt-4o-mini), `HERALD_AI_IMAGE_MODEL` (default gpt-image-1),
 * `HERALD_AI_IMAGE_HD_MODEL` (default: the image model), `HERALD_AI_TIMEOUT_SECONDS` (default 120).
 */
export const configFromEnv = (env: NodeJS.ProcessEnv = process.env): Option.Option<Config> => {
  const get = (name: string) => {
    const value = env[name]?.trim()
    return value === undefined || value === "" ? undefined : value
  }
  const baseUrl = get("HERALD_AI_BASE_URL")
  if (baseUrl === undefined) return Option.none()
  const key = get("HERALD_AI_API_KEY")
  const imageModel = get("HERALD_AI_IMAGE_MODEL") ?? defaultImageModel
  const seconds = Number(get("HERALD_AI_TIMEOUT_SECONDS") ?? defaultTimeoutSeconds)
  return Option.some({
    baseUrl: normalizeBaseUrl(baseUrl),
    apiKey: key === undefined ? Option.none() : Option.some(Redacted.make(key)),
    captionModel: get("HERALD_AI_CAPTION_MODEL") ?? defaultCaptionModel,
    imageModels: { standard: imageModel, hd: get("HERALD_AI_IMAGE_HD_MODEL") ?? imageModel },
    timeout: Duration.seconds(Number.isFinite(seconds) && seconds > 0 ? seconds : defaultTimeoutSeconds)
  })
}

// ---------------------------------------------------------------------------------------------------
// Wire shapes (only what is read)
// ---------------------------------------------------------------------------------------------------

const ErrorBody = Schema.Struct({
  error: Schema.Struct({
    message: Schema.optional(Schema.NullOr(Schema.String)),
    code: Schema.optional(Schema.NullOr(Schema.Union(Schema.String, Schema.Number))),
    type: Schema.optional(Schema.NullOr(Schema.String))
  })
})

const ChatCompletion = Schema.Struct({
  choices: Schema.Array(Schema.Struct({
    message: Schema.optional(Schema.Struct({
      content: Schema.optional(Schema.NullOr(Schema.String)),
      refusal: Schema.optional(Schema.NullOr(Schema.String))
    })),
    finish_reason: Schema.optional(Schema.NullOr(Schema.String))
  }))
})

const ImagesResponse = Schema.Struct({
  data: Schema.Array(Schema.Struct({ b64_json: Schema.optional(Schema.NullOr(Schema.String)) }))
})

const CaptionsJson = Schema.Union(
  Schema.Struct({ captions: Schema.Array(Schema.String) }),
  Schema.Array(Schema.String)
)

const safetyCodes = new Set(["content_policy_violation", "content_filter", "moderation_blocked"])

// ---------------------------------------------------------------------------------------------------
// Calls
// ---------------------------------------------------------------------------------------------------

interface Failure {
  readonly reason: GenerationFailure
  readonly message: string
}

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** Removes the key from a provider's text (some echo a masked key back) and caps its length. */
const scrub = (text: string, config: Config): string => {
  const key = Option.map(config.apiKey, Redacted.value)
  let out = Option.isSome(key) && key.value.length >= 4 ? text.split(key.value).join("[redacted]") : text
  out = out.replace(/\b(sk|pk|key)-[A-Za-z0-9_*.-]{6,}/g, "[redacted]")
  return out.length > 300 ? `${out.slice(0, 300)}…` : out
}

/** POSTs JSON and returns the parsed body of a 2xx; every other outcome becomes a `Failure`. */
const postJson = (client: HttpClient.HttpClient, config: Config, path: string, body: unknown, what: string) => {
  let request = HttpClientRequest.post(`${config.baseUrl}${path}`).pipe(
    HttpClientRequest.bodyUnsafeJson(body),
    HttpClientRequest.acceptJson
  )
  if (Option.isSome(config.apiKey)) {
    request = HttpClientRequest.setHeader(request, "authorization", `Bearer ${Redacted.value(config.apiKey.value)}`)
  }
  return client.execute(request).pipe(
    Effect.flatMap((response) => Effect.map(response.text, (text) => ({ status: response.status, text }))),
    Effect.timeoutFail({
      duration: config.timeout,
      onTimeout: () => "timeout" as const
    }),
    Effect.catchAll((e) =>
      Effect.fail<Failure>({
        reason: "failed",
        message: e === "timeout"
          ? `the AI provider did not answer the ${what} request within ${Duration.format(config.timeout)}`
          : `the AI provider could not be reached for the ${what} request`
      })
    ),
    Effect.flatMap(({ status, text }) => {
      const json = parseJson(text)
      if (status >= 200 && status < 300) {
        return json === undefined
          ? Effect.fail<Failure>({ reason: "failed", message: `the AI provider's ${what} answer is not JSON` })
          : Effect.succeed(json)
      }
      const error = Option.getOrUndefined(Schema.decodeUnknownOption(ErrorBody)(json))?.error
      const code = error?.code === undefined || error.code === null ? undefined : String(error.code)
      const providerMessage = error?.message ?? undefined
      if (status === 400 && code !== undefined && safetyCodes.has(code)) {
        return Effect.fail<Failure>({
          reason: "rejected",
          message: providerMessage === undefined ? code : scrub(providerMessage, config)
        })
      }
      if (status === 401 || status === 403) {
        return Effect.fail<Failure>({
          reason: "unconfigured",
          message: "the AI provider refused Herald's credentials (the operator checks HERALD_AI_API_KEY)"
        })
      }
      if (status === 429) {
        return Effect.fail<Failure>({ reason: "failed", message: "the AI provider is rate limiting requests (429)" })
      }
      return Effect.fail<Failure>({
        reason: "failed",
        message: `the AI provider answered the ${what} request with HTTP ${status}` +
          (code === undefined ? "" : ` (${scrub(code, config)})`)
      })
    }),
    Effect.tapError((f) => Effect.logWarning(`AI provider ${what} request failed: ${f.reason}: ${f.message}`))
  )
}

const lengthGuide = { short: "one sentence", medium: "two or three sentences", long: "a short paragraph" } as const

export const captionMessages = (request: CaptionRequest) => {
  const rules = [
    `Write ${request.count} distinct social media caption${request.count === 1 ? "" : "s"}` +
    (request.platform === undefined ? "" : ` for ${request.platform}`) + ".",
    `Tone: ${request.tone}. Length: ${lengthGuide[request.length]}.`,
    `Each caption must be at most ${request.maxLength} characters, hashtags and emojis included.`,
    request.includeHashtags ? "End each caption with two to four relevant hashtags." : "Use no hashtags.",
    request.includeEmojis ? "Use a few fitting emojis." : "Use no emojis.",
    `Reply with JSON only, exactly: {"captions": ["first caption", ...]} with ${request.count} strings.`
  ]
  return [
    { role: "system", content: "You write captions for social media posts. " + rules.join(" ") },
    { role: "user", content: `Topic: ${request.topic}` }
  ]
}

/** The captions of a completion's text: the JSON asked for (also inside a code fence), else the text as one caption. */
export const parseCaptions = (content: string): ReadonlyArray<string> => {
  const unfenced = content.trim().replace(/^```(?:json)?\s*/i, "").replace(/\s*```$/, "").trim()
  const start = unfenced.search(/[[{]/)
  const candidates = [
    unfenced,
    start >= 0 ? unfenced.slice(start, Math.max(unfenced.lastIndexOf("}"), unfenced.lastIndexOf("]")) + 1) : ""
  ]
  for (const candidate of candidates) {
    const decoded = Schema.decodeUnknownOption(CaptionsJson)(parseJson(candidate))
    if (Option.isSome(decoded)) {
      const list = Array.isArray(decoded.value)
        ? decoded.value
        : (decoded.value as { captions: ReadonlyArray<string> }).captions
      return list.map((c) => c.trim()).filter((c) => c !== "")
    }
  }
  if (unfenced.startsWith("{") || unfenced.startsWith("[") || unfenced === "") return []
  return [unfenced]
}

export const make = (config: Config) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const captionFailure = (f: Failure) => new CaptionGenerationError({ reason: f.reason, message: f.message })
    const imageFailure = (f: Failure) => new ImageGenerationError({ reason: f.reason, message: f.message })

    const captions = CaptionGenerator.of({
      configured: true,
      generate: (request) =>
        postJson(client, config, "/chat/completions", {
          model: config.captionModel,
          messages: captionMessages(request),
          temperature: 0.8
        }, "caption").pipe(
          Effect.flatMap((json) =>
            Option.match(Schema.decodeUnknownOption(ChatCompletion)(json), {
              onNone: () =>
                Effect.fail<Failure>({ reason: "failed", message: "the AI provider's caption answer has no choices" }),
              onSome: (completion) => {
                const choice = completion.choices[0]
                if (choice === undefined) {
                  return Effect.fail<Failure>({
                    reason: "failed",
                    message: "the AI provider's caption answer has no choices"
                  })
                }
                if (choice.finish_reason === "content_filter") {
                  return Effect.fail<Failure>({
                    reason: "rejected",
                    message: "the answer was withheld by the content filter"
                  })
                }
                const refusal = choice.message?.refusal
                if (refusal !== undefined && refusal !== null && refusal.trim() !== "") {
                  return Effect.fail<Failure>({ reason: "rejected", message: scrub(refusal, config) })
                }
                return Effect.succeed({
                  captions: parseCaptions(choice.message?.content ?? ""),
                  provider,
                  model: config.captionModel
                })
              }
            })
          ),
          Effect.mapError(captionFailure)
        )
    })

    const images = ImageGenerator.of({
      configured: true,
      generate: (request) => {
        const size = providerSize(request.aspectRatio)
        const model = config.imageModels[request.model]
        return postJson(client, config, "/images/generations", {
          model,
          prompt: request.prompt,
          n: 1,
          size: `${size.width}x${size.height}`,
          response_format: "b64_json"
        }, "image").pipe(
          Effect.flatMap((json) => {
            const b64 = Option.getOrUndefined(Schema.decodeUnknownOption(ImagesResponse)(json))?.data[0]?.b64_json
            if (b64 === undefined || b64 === null || b64 === "") {
              return Effect.fail<Failure>({
                reason: "failed",
                message: "the AI provider's image answer has no b64_json image"
              })
            }
            return Effect.succeed({ bytes: new Uint8Array(Buffer.from(b64, "base64")), provider, model })
          }),
          Effect.mapError(imageFailure)
        )
      }
    })
    return { captions, images }
  })

export const layer = (config: Config): Layer.Layer<CaptionGenerator | ImageGenerator, never, HttpClient.HttpClient> =>
  Layer.effectContext(
    Effect.map(
      make(config),
      ({ captions, images }) => Context.make(CaptionGenerator, captions).pipe(Context.add(ImageGenerator, images))
    )
  )
