/**
 * A loopback server that answers like the OpenAI-compatible API: `POST /v1/chat/completions` and
 * `POST /v1/images/generations` (b64_json), with its error shapes. What it does is chosen by words in
 * the topic or prompt, so that a test (or a `herald serve` child pointed at it) can provoke each case:
 *
 * - `REJECT`: 400 `{error: {code: "content_policy_violation"}}` (the safety filter)
 * - `FILTER`: 200 with `finish_reason: "content_filter"` and no content (captions)
 * - `RATELIMIT`: 429 `rate_limit_exceeded` with Retry-After
 * - `BROKEN`: 500
 * - `LONG`: captions of 400 characters (over X's 280)
 * - `FENCE`: the JSON inside a ```json code fence
 * - `NOTIMAGE`: an image answer whose bytes are text
 * - `SLEEP`: answers after 3 seconds
 *
 * Otherwise captions are `Caption <n> about <topic> #Fake` (as many as the prompt asks for) and images
 * are solid PNGs of the requested size. A wrong key is 401 `invalid_api_key`, echoing a masked key as
 * OpenAI does.
 */
import * as Png from "../../../src/ai/Png.js"
import * as FakeServer from "../../platforms/fakes/FakeServer.js"

export const apiKey = "sk-test-fake-0123456789abcdef"

export interface OpenAiFake {
  /** The API root, `http://127.0.0.1:PORT/v1`. */
  readonly url: string
  readonly requests: Array<FakeServer.Recorded>
  readonly close: () => Promise<void>
}

interface ChatBody {
  readonly model?: string
  readonly messages?: ReadonlyArray<{ readonly role: string; readonly content: string }>
}

interface ImageBody {
  readonly model?: string
  readonly prompt?: string
  readonly size?: string
  readonly response_format?: string
}

const error = (
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {}
): FakeServer.Reply => ({
  status,
  headers,
  body: { error: { message, type: status === 429 ? "requests" : "invalid_request_error", param: null, code } }
})

const safety = () =>
  error(400, "content_policy_violation", "Your request was rejected as a result of our safety system.")

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const completion = (content: string | null, finishReason = "stop"): FakeServer.Reply => ({
  status: 200,
  body: {
    id: "chatcmpl-fake",
    object: "chat.completion",
    created: 1_700_000_000,
    model: "fake-chat",
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: finishReason }],
    usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 }
  }
})

export const solidPng = (width: number, height: number): Uint8Array =>
  Png.encodeRgb(width, height, () => [30, 120, 200])

export const start = async (options: { readonly key?: string } = {}): Promise<OpenAiFake> => {
  const key = options.key ?? apiKey
  const server = await FakeServer.start(async (request) => {
    if (request.headers["authorization"] !== `Bearer ${key}`) {
      return error(401, "invalid_api_key", `Incorrect API key provided: ${key.slice(0, 5)}****${key.slice(-4)}.`)
    }
    if (request.method === "POST" && request.path === "/v1/chat/completions") {
      const body = request.json as ChatBody
      const system = body.messages?.find((m) => m.role === "system")?.content ?? ""
      const topic = (body.messages?.find((m) => m.role === "user")?.content ?? "").replace(/^Topic: /, "")
      const count = Number(/Write (\d+) distinct/.exec(system)?.[1] ?? "1")
      if (topic.includes("SLEEP")) await sleep(3000)
      if (topic.includes("REJECT")) return safety()
      if (topic.includes("FILTER")) return completion(null, "content_filter")
      if (topic.includes("RATELIMIT")) {
        return error(429, "rate_limit_exceeded", "Rate limit reached", { "retry-after": "20" })
      }
      if (topic.includes("BROKEN")) return error(500, "server_error", "The server had an error")
      const captions = Array.from({ length: count }, (_, i) =>
        topic.includes("LONG")
          ? `Caption ${i + 1} ${"word ".repeat(80)}`.trim()
          : `Caption ${i + 1} about ${topic} #Fake`)
      const json = JSON.stringify({ captions })
      return completion(topic.includes("FENCE") ? "```json\n" + json + "\n```" : json)
    }
    if (request.method === "POST" && request.path === "/v1/images/generations") {
      const body = request.json as ImageBody
      const prompt = body.prompt ?? ""
      if (prompt.includes("SLEEP")) await sleep(3000)
      if (prompt.includes("REJECT")) return safety()
      if (prompt.includes("RATELIMIT")) {
        return error(429, "rate_limit_exceeded", "Rate limit reached", { "retry-after": "20" })
      }
      if (prompt.includes("BROKEN")) return error(500, "server_error", "The server had an error")
      if (body.response_format !== "b64_json") return error(400, "invalid_value", "expected response_format b64_json")
      const [w, h] = (body.size ?? "1024x1024").split("x").map(Number) as [number, number]
      const bytes = prompt.includes("NOTIMAGE") ? new TextEncoder().encode("not an image at all") : solidPng(w, h)
      return {
        status: 200,
        body: {
          created: 1_700_000_000,
          data: [{ b64_json: Buffer.from(bytes).toString("base64"), revised_prompt: prompt }]
        }
      }
    }
    return error(404, "unknown_url", `Unknown request URL: ${request.method} ${request.path}`)
  })
  return { url: `${server.url}/v1`, requests: server.requests, close: server.close }
}
