/**
 * Real receivers on 127.0.0.1 for the transport tests: plain HTTP, and HTTPS with a self-signed
 * certificate made by the openssl command for the test run.
 */
import { execFileSync, spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Https from "node:https"
import type * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import type * as Tls from "node:tls"

export interface Received {
  readonly method: string
  readonly path: string
  readonly headers: Http.IncomingHttpHeaders
  readonly rawHeaders: ReadonlyArray<string>
  readonly body: Buffer
  /** The TLS server name the client sent (HTTPS only). */
  readonly servername: string | undefined
}

export interface Receiver {
  readonly port: number
  readonly received: Array<Received>
  /** Resolves when every connection the server ever saw has closed. */
  readonly connectionsClosed: () => Promise<void>
  /** Bytes the streaming route managed to hand to the socket before the client went away. */
  readonly streamed: { bytes: number; finished: boolean; closed: Promise<void> }
  readonly close: () => Promise<void>
}

const oneMegabyte = 1024 * 1024

/** Stops after this many bytes if the client keeps reading: far more than socket buffers hold. */
export const streamLimit = 64 * oneMegabyte

const handler =
  (received: Array<Received>, streamed: Receiver["streamed"], onStreamClose: () => void) =>
  (req: Http.IncomingMessage, res: Http.ServerResponse) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const path = req.url ?? "/"
      received.push({
        method: req.method ?? "",
        path,
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body: Buffer.concat(chunks),
        servername: (req.socket as Tls.TLSSocket).servername || undefined
      })
      if (path.startsWith("/ok")) {
        res.writeHead(200, { "Content-Type": "text/plain" }).end("thanks")
      } else if (path === "/hang") {
        // Never answers.
      } else if (path === "/hang-body") {
        res.writeHead(200, { "Content-Type": "text/plain" })
        res.write("partial")
      } else if (path === "/big") {
        res.writeHead(200, { "Content-Type": "text/plain" }).end("a".repeat(oneMegabyte))
      } else if (path === "/big-utf8") {
        // One ASCII byte, then 2-byte characters: byte 2048 falls in the middle of one.
        res.writeHead(200, { "Content-Type": "text/plain; charset=utf-8" }).end("x" + "é".repeat(4096))
      } else if (path === "/stream") {
        res.writeHead(200, { "Content-Type": "application/octet-stream" })
        const chunk = Buffer.alloc(64 * 1024, 98)
        const pump = () => {
          while (streamed.bytes < streamLimit) {
            streamed.bytes += chunk.length
            if (!res.write(chunk)) {
              res.once("drain", pump)
              return
            }
          }
          streamed.finished = true
          res.end()
        }
        res.on("close", onStreamClose)
        pump()
      } else if (path === "/redirect") {
        res.writeHead(302, { Location: "/ok-after-redirect" }).end()
      } else if (path === "/fail") {
        res.writeHead(500, { "Content-Type": "text/plain" }).end("boom")
      } else {
        res.writeHead(404).end()
      }
    })
  }

const listen = (
  create: (h: Http.RequestListener) => Http.Server | Https.Server
): Promise<Receiver> => {
  const received: Array<Received> = []
  let markStreamClosed: () => void = () => undefined
  const streamed = {
    bytes: 0,
    finished: false,
    closed: new Promise<void>((resolve) => {
      markStreamClosed = resolve
    })
  }
  const server = create(handler(received, streamed, () => markStreamClosed()))
  const sockets = new Set<Net.Socket>()
  const closedPromises: Array<Promise<void>> = []
  server.on("connection", (socket: Net.Socket) => {
    sockets.add(socket)
    closedPromises.push(new Promise((resolve) => socket.on("close", () => resolve())))
    socket.on("close", () => sockets.delete(socket))
  })
  return new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address() as Net.AddressInfo
      resolve({
        port: address.port,
        received,
        streamed,
        connectionsClosed: () => Promise.all(closedPromises).then(() => undefined),
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy()
            server.close(() => done())
          })
      })
    })
  })
}

export const startHttp = (): Promise<Receiver> => listen((h) => Http.createServer(h))

export interface Certificate {
  readonly key: string
  readonly cert: string
}

/** Whether the openssl command is on the PATH (the HTTPS tests need it to make their certificate). */
export const opensslAvailable: boolean = spawnSync("openssl", ["version"], { stdio: "ignore" }).status === 0

/** A self-signed certificate for `receiver.test` and 127.0.0.1, valid for a day. */
export const makeCertificate = (): Certificate => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "herald-webhook-tls-"))
  try {
    const keyPath = Path.join(dir, "key.pem")
    const certPath = Path.join(dir, "cert.pem")
    execFileSync("openssl", [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      keyPath,
      "-out",
      certPath,
      "-days",
      "1",
      "-subj",
      "/CN=receiver.test",
      "-addext",
      "subjectAltName=DNS:receiver.test,IP:127.0.0.1"
    ], { stdio: "ignore" })
    return { key: Fs.readFileSync(keyPath, "utf8"), cert: Fs.readFileSync(certPath, "utf8") }
  } finally {
    Fs.rmSync(dir, { recursive: true, force: true })
  }
}

export const startHttps = (certificate: Certificate): Promise<Receiver> =>
  listen((h) => Https.createServer({ key: certificate.key, cert: certificate.cert }, h))
