/**
 * The OpenAI-compatible provider adapter against a loopback fake of that API: what goes on the wire
 * (paths, model, bearer key, size, b64_json), captions parsed from JSON (also fenced), the safety
 * filter's refusal (400 content_policy_violation, finish_reason content_filter) as `rejected`, 429 and
 * 5xx and an unreachable provider as `failed`, a refused key as `unconfigured`, the key never in an
 * error message; and the configuration read from the environment.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { describe, expect, it } from "@effect/vitest"
import type { CaptionGenerator, CaptionRequest } from "@herald/core/ai/CaptionGenerator"
import type { ImageGenerator } from "@herald/core/ai/ImageGenerator"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { pngDimensions } from "../../src/media/MediaInspector.js"
import * as OpenAiCompatible from "../../src/ai/OpenAiCompatible.js"
import * as OpenAiFake from "./fakes/OpenAiFake.js"

const configFor = (url: string, overrides: Partial<OpenAiCompatible.Config> = {}): OpenAiCompatible.Config => ({
  baseUrl: url,
  apiKey: Option.some(Redacted.make(OpenAiFake.apiKey)),
  captionModel: "fake-chat",
  imageModels: { standard: "fake-image", hd: "fake-image-hd" },
  timeout: Duration.seconds(10),
  ...overrides
})

const setup = (overrides: Partial<OpenAiCompatible.Config> = {}) =>
  Effect.gen(function*() {
    const fake = yield* Effect.acquireRelease(Effect.promise(() => OpenAiFake.start()), (f) =>
      Effect.promise(() => f.close()))
    const made = yield* OpenAiCompatible.make(configFor(fake.url, overrides)).pipe(
      Effect.provide(FetchHttpClient.layer)
    )
    return { fake, captions: made.captions as CaptionGenerator["Type"], images: made.images as ImageGenerator["Type"] }
  })

const request = (topic: string, overrides: Partial<CaptionRequest> = {}): CaptionRequest => ({
  topic,
  tone: "witty",
  length: "short",
  platform: "x",
  includeHashtags: true,
  includeEmojis: false,
  count: 3,
  maxLength: 280,
  ...overrides
})

const noKey = (message: string) => {
  expect(message).not.toContain(OpenAiFake.apiKey)
  expect(message).not.toContain(OpenAiFake.apiKey.slice(-8))
}

describe("OpenAI-compatible provider against the loopback fake", () => {
  it.scopedLive("captions: one chat completion with model, bearer key and the request's terms; JSON captions parsed", () =>
    Effect.gen(function*() {
      const { captions, fake } = yield* setup()
      const result = yield* captions.generate(request("Launch day"))
      expect(result).toEqual({
        captions: [
          "Caption 1 about Launch day #Fake",
          "Caption 2 about Launch day #Fake",
          "Caption 3 about Launch day #Fake"
        ],
        provider: "openai-compatible",
        model: "fake-chat"
      })
      expect(fake.requests).toHaveLength(1)
      const sent = fake.requests[0]!
      expect(sent.path).toBe("/v1/chat/completions")
      expect(sent.headers["authorization"]).toBe(`Bearer ${OpenAiFake.apiKey}`)
      const body = sent.json as { model: string; messages: Array<{ role: string; content: string }> }
      expect(body.model).toBe("fake-chat")
      const system = body.messages[0]!.content
      expect(system).toContain("Write 3 distinct social media captions for x")
      expect(system).toContain("Tone: witty")
      expect(system).toContain("at most 280 characters")
      expect(system).toContain("hashtags")
      expect(system).toContain("Use no emojis")
      expect(body.messages[1]).toEqual({ role: "user", content: "Topic: Launch day" })
    }))

  it.scopedLive("captions inside a ```json code fence are parsed too", () =>
    Effect.gen(function*() {
      const { captions } = yield* setup()
      const result = yield* captions.generate(request("FENCE topic", { count: 2 }))
      expect(result.captions).toEqual(["Caption 1 about FENCE topic #Fake", "Caption 2 about FENCE topic #Fake"])
    }))

  it.scopedLive("the safety filter's 400 content_policy_violation is rejected, with the provider's message", () =>
    Effect.gen(function*() {
      const { captions, images } = yield* setup()
      const caption = yield* Effect.flip(captions.generate(request("REJECT this")))
      expect(caption.reason).toBe("rejected")
      expect(caption.message).toContain("safety system")
      const image = yield* Effect.flip(images.generate({ prompt: "REJECT", aspectRatio: "1:1", model: "standard" }))
      expect(image.reason).toBe("rejected")
    }))

  it.scopedLive("a choice with finish_reason content_filter is rejected", () =>
    Effect.gen(function*() {
      const { captions } = yield* setup()
      const error = yield* Effect.flip(captions.generate(request("FILTER me")))
      expect(error.reason).toBe("rejected")
      expect(error.message).toContain("content filter")
    }))

  it.scopedLive("429 and 500 are failed (retryable on Herald's side)", () =>
    Effect.gen(function*() {
      const { captions, images } = yield* setup()
      const limited = yield* Effect.flip(captions.generate(request("RATELIMIT")))
      expect(limited.reason).toBe("failed")
      expect(limited.message).toContain("429")
      const broken = yield* Effect.flip(captions.generate(request("BROKEN")))
      expect(broken.reason).toBe("failed")
      expect(broken.message).toContain("HTTP 500")
      const image = yield* Effect.flip(images.generate({ prompt: "RATELIMIT", aspectRatio: "1:1", model: "standard" }))
      expect(image.reason).toBe("failed")
    }))

  it.scopedLive("a refused key is unconfigured, and the key (even masked) is in no message", () =>
    Effect.gen(function*() {
      const { captions } = yield* setup({ apiKey: Option.some(Redacted.make("sk-wrong-key-987654321")) })
      const error = yield* Effect.flip(captions.generate(request("Hello")))
      expect(error.reason).toBe("unconfigured")
      expect(error.message).toContain("HERALD_AI_API_KEY")
      expect(error.message).not.toContain("sk-wrong")
      noKey(error.message)
    }))

  it.scopedLive("a provider that does not answer in time, or cannot be reached, is failed", () =>
    Effect.gen(function*() {
      const { captions } = yield* setup({ timeout: Duration.millis(300) })
      const slow = yield* Effect.flip(captions.generate(request("SLEEP")))
      expect(slow.reason).toBe("failed")
      expect(slow.message).toContain("did not answer")
      const unreachable = yield* OpenAiCompatible.make(configFor("http://127.0.0.1:9/v1")).pipe(
        Effect.provide(FetchHttpClient.layer)
      )
      const error = yield* Effect.flip(unreachable.captions.generate(request("Hello")))
      expect(error.reason).toBe("failed")
      noKey(error.message)
    }))

  it.scopedLive("images: b64_json at the aspect ratio's size, the model tier mapped to the provider's model", () =>
    Effect.gen(function*() {
      const { fake, images } = yield* setup()
      const result = yield* images.generate({ prompt: "A lighthouse", aspectRatio: "16:9", model: "hd" })
      expect(result.provider).toBe("openai-compatible")
      expect(result.model).toBe("fake-image-hd")
      expect(pngDimensions(result.bytes)).toEqual({ width: 1024, height: 576 })
      const sent = fake.requests[0]!
      expect(sent.path).toBe("/v1/images/generations")
      expect(sent.json).toEqual({
        model: "fake-image-hd",
        prompt: "A lighthouse",
        n: 1,
        size: "1024x576",
        response_format: "b64_json"
      })
      const portrait = yield* images.generate({ prompt: "A tower", aspectRatio: "4:5", model: "standard" })
      expect(pngDimensions(portrait.bytes)).toEqual({ width: 832, height: 1024 })
      expect((fake.requests[1]!.json as { model: string }).model).toBe("fake-image")
    }))

  it("reads its configuration from the environment; none without HERALD_AI_BASE_URL; the key stays redacted", () => {
    expect(Option.isNone(OpenAiCompatible.configFromEnv({}))).toBe(true)
    expect(Option.isNone(OpenAiCompatible.configFromEnv({ HERALD_AI_BASE_URL: "  " }))).toBe(true)
    const config = Option.getOrThrow(OpenAiCompatible.configFromEnv({
      HERALD_AI_BASE_URL: "http://localhost:11434/",
      HERALD_AI_API_KEY: "sk-secret-value-123",
      HERALD_AI_CAPTION_MODEL: "llama3.2",
      HERALD_AI_IMAGE_MODEL: "flux"
    }))
    expect(config.baseUrl).toBe("http://localhost:11434/v1")
    expect(config.captionModel).toBe("llama3.2")
    expect(config.imageModels).toEqual({ standard: "flux", hd: "flux" })
    expect(JSON.stringify(config)).not.toContain("sk-secret-value-123")
    expect(String(Option.getOrThrow(config.apiKey))).not.toContain("sk-secret-value-123")
    const openai = Option.getOrThrow(OpenAiCompatible.configFromEnv({
      HERALD_AI_BASE_URL: "https://api.openai.com/v1",
      HERALD_AI_IMAGE_HD_MODEL: "gpt-image-1-hd"
    }))
    expect(openai.baseUrl).toBe("https://api.openai.com/v1")
    expect(Option.isNone(openai.apiKey)).toBe(true)
    expect(openai.captionModel).toBe(OpenAiCompatible.defaultCaptionModel)
    expect(openai.imageModels).toEqual({ standard: OpenAiCompatible.defaultImageModel, hd: "gpt-image-1-hd" })
  })

  it("parses captions leniently: an object, a bare array, fenced, or plain text as one caption", () => {
    expect(OpenAiCompatible.parseCaptions("{\"captions\": [\"a\", \" b \", \"\"]}")).toEqual(["a", "b"])
    expect(OpenAiCompatible.parseCaptions("[\"x\", \"y\"]")).toEqual(["x", "y"])
    expect(OpenAiCompatible.parseCaptions("Sure! {\"captions\": [\"z\"]}")).toEqual(["z"])
    expect(OpenAiCompatible.parseCaptions("Just one caption")).toEqual(["Just one caption"])
    expect(OpenAiCompatible.parseCaptions("{\"broken\": ")).toEqual([])
  })
})
