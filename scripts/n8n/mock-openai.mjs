#!/usr/bin/env node
// Tiny OpenAI-compatible streaming mock for n8n's agents (plain Node, no deps).
//
//   node mock-openai.mjs [--port 18080] [--words 50] [--delay 50]
//   env: MOCK_PORT, MOCK_WORDS, MOCK_DELAY_MS, MOCK_HOST (default 127.0.0.1)
//
// Routes (prefix /v1 optional):
//   POST /v1/responses          Responses API; stream:true -> SSE events as @ai-sdk/openai parses them
//   POST /v1/chat/completions   Chat Completions; stream:true -> chat.completion.chunk SSE + [DONE]
//   GET  /v1/models             model list (n8n's credential test / model discovery)
//   GET  /health                {ok, words, delayMs, requests, aborted}: `aborted` counts the
//                               streams whose client disconnected before their end
// Reply text: "word1 word2 ... wordN" (N words, D ms apart). A user message containing
// "[[words=N delay=D]]" overrides N/D for that request (either key may be omitted).
// The stream stops at once when the client disconnects (n8n aborts a cancelled turn).
import http from 'node:http'
import { randomBytes } from 'node:crypto'

const arg = (name, envName, def) => {
  const i = process.argv.indexOf(`--${name}`)
  if (i > 0 && process.argv[i + 1] !== undefined) return process.argv[i + 1]
  return process.env[envName] ?? def
}
const HOST = arg('host', 'MOCK_HOST', '127.0.0.1')
const PORT = Number(arg('port', 'MOCK_PORT', '18080'))
const WORDS = Number(arg('words', 'MOCK_WORDS', '50'))
const DELAY = Number(arg('delay', 'MOCK_DELAY_MS', '50'))

let requests = 0
let aborted = 0
let seq = 0
let msgCounter = 0
const id = (p) => `${p}_${randomBytes(12).toString('hex')}`
const log = (...a) => console.log(new Date().toISOString(), ...a)

function readBody(req) {
  return new Promise((resolve) => {
    let s = ''
    req.setEncoding('utf8')
    req.on('data', (c) => (s += c))
    req.on('end', () => {
      try {
        resolve(s ? JSON.parse(s) : {})
      } catch {
        resolve({})
      }
    })
  })
}

// Finds "[[words=N delay=D]]" in any text of the request, last one wins.
function overrides(body) {
  const text = JSON.stringify(body ?? {})
  const all = [...text.matchAll(/\[\[([^\]]*)\]\]/g)]
  const out = { words: WORDS, delay: DELAY }
  const m = all.at(-1)?.[1]
  if (m) {
    const w = /words=(\d+)/.exec(m)
    const d = /delay=(\d+)/.exec(m)
    if (w) out.words = Number(w[1])
    if (d) out.delay = Number(d[1])
  }
  return out
}

const deltas = (n) => Array.from({ length: n }, (_, i) => `word${i + 1}${i + 1 < n ? ' ' : ''}`)

function json(res, status, obj) {
  const b = JSON.stringify(obj)
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(b),
  })
  res.end(b)
}

function sseHead(res) {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  })
  res.flushHeaders?.()
}

// Streams parts with a delay; returns false if the client went away first.
async function pace(req, res, parts, delay, write) {
  let closed = false
  res.on('close', () => {
    if (!res.writableFinished) closed = true
  })
  for (let i = 0; i < parts.length; i++) {
    if (closed || res.destroyed) return false
    if (delay > 0) await new Promise((r) => setTimeout(r, delay))
    if (closed || res.destroyed) return false
    write(parts[i], i)
  }
  return true
}

function closedEarly(what) {
  aborted++
  log(`${what}: client closed early`)
}

async function responses(req, res, body) {
  const { words, delay } = overrides(body)
  const model = body.model ?? 'gpt-4o-mini'
  const respId = id('resp')
  const msgId = `msg_${++msgCounter}` // short ids, like the captured fixtures (msg_3)
  const created = Math.floor(Date.now() / 1000)
  const parts = deltas(words)
  const text = parts.join('')
  const usage = {
    input_tokens: 10,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: words,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 10 + words,
  }
  const message = (status, content) => ({
    type: 'message',
    id: msgId,
    status,
    role: 'assistant',
    content,
  })
  const outText = { type: 'output_text', text, annotations: [] }
  const response = (status, output) => ({
    id: respId,
    object: 'response',
    created_at: created,
    status,
    model,
    output,
    usage: status === 'completed' ? usage : null,
    incomplete_details: null,
    error: null,
  })

  if (!body.stream) {
    return json(res, 200, response('completed', [message('completed', [outText])]))
  }
  sseHead(res)
  const ev = (obj) => {
    obj.sequence_number = seq++
    res.write(`event: ${obj.type}\ndata: ${JSON.stringify(obj)}\n\n`)
  }
  ev({ type: 'response.created', response: response('in_progress', []) })
  ev({ type: 'response.in_progress', response: response('in_progress', []) })
  ev({ type: 'response.output_item.added', output_index: 0, item: message('in_progress', []) })
  ev({
    type: 'response.content_part.added',
    item_id: msgId,
    output_index: 0,
    content_index: 0,
    part: { type: 'output_text', text: '', annotations: [] },
  })
  const ok = await pace(req, res, parts, delay, (delta) =>
    ev({
      type: 'response.output_text.delta',
      item_id: msgId,
      output_index: 0,
      content_index: 0,
      delta,
      logprobs: [],
    }),
  )
  if (!ok) return closedEarly(`responses ${respId}`)
  ev({
    type: 'response.output_text.done',
    item_id: msgId,
    output_index: 0,
    content_index: 0,
    text,
    logprobs: [],
  })
  ev({
    type: 'response.content_part.done',
    item_id: msgId,
    output_index: 0,
    content_index: 0,
    part: outText,
  })
  ev({ type: 'response.output_item.done', output_index: 0, item: message('completed', [outText]) })
  ev({
    type: 'response.completed',
    response: response('completed', [message('completed', [outText])]),
  })
  res.end()
  log(`responses ${respId}: streamed ${words} words`)
}

async function chatCompletions(req, res, body) {
  const { words, delay } = overrides(body)
  const model = body.model ?? 'gpt-4o-mini'
  const cid = id('chatcmpl')
  const created = Math.floor(Date.now() / 1000)
  const parts = deltas(words)
  const usage = { prompt_tokens: 10, completion_tokens: words, total_tokens: 10 + words }
  if (!body.stream) {
    return json(res, 200, {
      id: cid,
      object: 'chat.completion',
      created,
      model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: parts.join('') },
          finish_reason: 'stop',
        },
      ],
      usage,
    })
  }
  sseHead(res)
  const chunk = (delta, finish_reason = null, extra = {}) =>
    res.write(
      `data: ${JSON.stringify({ id: cid, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason }], ...extra })}\n\n`,
    )
  chunk({ role: 'assistant', content: '' })
  const ok = await pace(req, res, parts, delay, (content) => chunk({ content }))
  if (!ok) return closedEarly(`chat ${cid}`)
  chunk({}, 'stop')
  if (body.stream_options?.include_usage) {
    res.write(
      `data: ${JSON.stringify({ id: cid, object: 'chat.completion.chunk', created, model, choices: [], usage })}\n\n`,
    )
  }
  res.write('data: [DONE]\n\n')
  res.end()
  log(`chat ${cid}: streamed ${words} words`)
}

const server = http.createServer(async (req, res) => {
  const path = new URL(req.url, 'http://x').pathname.replace(/\/+$/, '').replace(/^\/v1(?=\/)/, '')
  try {
    if (req.method === 'GET' && path === '/health') {
      return json(res, 200, { ok: true, words: WORDS, delayMs: DELAY, requests, aborted })
    }
    if (req.method === 'GET' && path === '/models') {
      return json(res, 200, {
        object: 'list',
        data: ['gpt-4o-mini', 'gpt-4o', 'gpt-4.1-mini'].map((m) => ({
          id: m,
          object: 'model',
          created: 0,
          owned_by: 'mock',
        })),
      })
    }
    if (req.method === 'POST' && (path === '/responses' || path === '/chat/completions')) {
      requests++
      const body = await readBody(req)
      log(`${req.method} ${req.url} model=${body.model} stream=${!!body.stream}`)
      return path === '/responses'
        ? await responses(req, res, body)
        : await chatCompletions(req, res, body)
    }
    log(`404 ${req.method} ${req.url}`)
    json(res, 404, {
      error: {
        message: `Unknown request URL: ${req.method} ${req.url}`,
        type: 'invalid_request_error',
        code: 'unknown_url',
      },
    })
  } catch (e) {
    log('error', e)
    if (!res.headersSent) json(res, 500, { error: { message: String(e), type: 'server_error' } })
    else res.destroy()
  }
})
server.keepAliveTimeout = 65_000
server.listen(PORT, HOST, () =>
  log(`mock-openai listening on http://${HOST}:${PORT}/v1 (words=${WORDS}, delay=${DELAY}ms)`),
)
for (const s of ['SIGINT', 'SIGTERM'])
  process.on(
    s,
    () => server.close(() => process.exit(0)) && setTimeout(() => process.exit(0), 500).unref(),
  )
