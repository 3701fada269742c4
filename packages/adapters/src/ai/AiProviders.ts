/**
 * Which AI generators a server runs with: the OpenAI-compatible provider when one is configured
 * (`HERALD_AI_BASE_URL`), else the sandbox under `--sandbox`, else a stand-in that answers every
 * request with 400 misconfig.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { CaptionGenerator } from "@herald/core/ai/CaptionGenerator"
import { ImageGenerator } from "@herald/core/ai/ImageGenerator"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as OpenAiCompatible from "./OpenAiCompatible.js"
import * as Sandbox from "./AiSandbox.js"

/** No provider configured and no sandbox: every request is answered 400 misconfig, nothing charged. */
export const layerUnconfigured: Layer.Layer<CaptionGenerator | ImageGenerator> = Layer.merge(
  Layer.succeed(
    CaptionGenerator,
    CaptionGenerator.of({ configured: false, generate: () => Effect.die("no AI provider configured") })
  ),
  Layer.succeed(
    ImageGenerator,
    ImageGenerator.of({ configured: false, generate: () => Effect.die("no AI provider configured") })
  )
)

export const layerFromEnv = (options: { readonly sandbox: boolean; readonly env?: NodeJS.ProcessEnv }): Layer.Layer<
  CaptionGenerator | ImageGenerator
> =>
  Option.match(OpenAiCompatible.configFromEnv(options.env ?? process.env), {
    onSome: (config) => OpenAiCompatible.layer(config).pipe(Layer.provide(FetchHttpClient.layer)),
    onNone: () => (options.sandbox ? Sandbox.layer : layerUnconfigured)
  })
