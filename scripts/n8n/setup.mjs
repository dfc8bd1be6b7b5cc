#!/usr/bin/env node
// Idempotent REST setup of a running n8n 2.41.1 (Node 20, plain fetch):
// owner setup (if not done) -> login (n8n-auth cookie + fixed browser-id) -> openAiApi credential
// pointing at the mock -> agent with model + credential -> $N8N_ROOT/session.json
//
// env: N8N_PORT (5678), MOCK_PORT (18080), OWNER_EMAIL, OWNER_PASSWORD, AGENT_NAME, MODEL
//      SESSION_FILE (default: $N8N_ROOT/session.json)
import { writeFileSync, readFileSync, existsSync } from 'node:fs'
import { join } from 'node:path'

const root = process.env.N8N_ROOT ?? '/tmp/preview-chat-n8n'
const runDir = join(root, 'run')
const fromRun = (f, def) =>
  existsSync(join(runDir, f)) ? readFileSync(join(runDir, f), 'utf8').trim() : def
const N8N_PORT = process.env.N8N_PORT ?? fromRun('n8n.port', '5678')
const MOCK_PORT = process.env.MOCK_PORT ?? fromRun('mock.port', '18080')
const base = `http://127.0.0.1:${N8N_PORT}/rest`
const email = process.env.OWNER_EMAIL ?? 'owner@interop.local'
const password = process.env.OWNER_PASSWORD ?? 'Interop-Pass-2041'
const browserId = process.env.BROWSER_ID ?? 'n8n-kit-browser-id-0001'
const agentName = process.env.AGENT_NAME ?? 'interop-agent'
const model = process.env.MODEL ?? 'openai/gpt-4o-mini'
const credName = 'mock-openai'
const mockUrl = `http://127.0.0.1:${MOCK_PORT}/v1`
const sessionFile = process.env.SESSION_FILE ?? join(root, 'session.json')

let cookie = ''
async function api(method, path, body, { expect = [200], raw = false } = {}) {
  const headers = { 'browser-id': browserId }
  if (cookie) headers.cookie = cookie
  if (body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(base + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  let json
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined // not JSON: the status check below says what went wrong
  }
  if (!expect.includes(res.status)) {
    throw new Error(`${method} ${path} -> ${res.status}: ${text.slice(0, 500)}`)
  }
  return raw ? { res, json, text } : json
}

const step = (m) => console.log(`[setup] ${m}`)

// 1. owner
const settings = await api('GET', '/settings')
const needsSetup = settings?.data?.userManagement?.showSetupOnFirstLoad
if (needsSetup) {
  await api('POST', '/owner/setup', { email, firstName: 'Interop', lastName: 'Owner', password })
  step(`owner created: ${email}`)
} else {
  step('owner already set up')
}

// 2. login, keep n8n-auth cookie
{
  const { res } = await api(
    'POST',
    '/login',
    { emailOrLdapLoginId: email, password },
    { raw: true },
  )
  const set = res.headers.getSetCookie?.() ?? [res.headers.get('set-cookie')]
  const auth = set.map((c) => c?.split(';')[0]).find((c) => c?.startsWith('n8n-auth='))
  if (!auth) throw new Error('login: no n8n-auth cookie in ' + JSON.stringify(set))
  cookie = auth
  step('logged in (n8n-auth cookie kept, browser-id ' + browserId + ')')
}

// 3. personal project
const project = (await api('GET', '/projects/personal')).data
const projectId = project.id
step(`personal project ${projectId}`)

// 4. openAiApi credential -> mock
const creds = (await api('GET', '/credentials')).data ?? []
let cred = creds.find((c) => c.name === credName && c.type === 'openAiApi')
const credData = { apiKey: 'sk-mock-key', url: mockUrl }
if (cred) {
  await api('PATCH', `/credentials/${cred.id}`, {
    name: credName,
    type: 'openAiApi',
    data: credData,
  })
  step(`credential ${cred.id} updated -> ${mockUrl}`)
} else {
  cred = (
    await api('POST', '/credentials', {
      name: credName,
      type: 'openAiApi',
      data: credData,
      projectId,
    })
  ).data
  step(`credential ${cred.id} created -> ${mockUrl}`)
}

// 5. agent + model
const list = (await api('GET', `/projects/${projectId}/agents/v2`)).data
const agents = Array.isArray(list) ? list : (list?.data ?? list?.items ?? [])
let agent = agents.find((a) => a.name === agentName)
if (!agent) {
  agent = (await api('POST', `/projects/${projectId}/agents/v2`, { name: agentName })).data
  step(`agent ${agent.id} created`)
} else {
  step(`agent ${agent.id} exists`)
}
const agentId = agent.id
const { config, configHash } = (
  await api('GET', `/projects/${projectId}/agents/v2/${agentId}/config`)
).data
const wanted = {
  ...config,
  model,
  credential: cred.id,
  instructions: config.instructions || 'You are a test agent. Answer briefly.',
}
if (
  config.model !== wanted.model ||
  config.credential !== wanted.credential ||
  config.instructions !== wanted.instructions
) {
  await api('PUT', `/projects/${projectId}/agents/v2/${agentId}/config`, {
    config: wanted,
    baseConfigHash: configHash ?? null,
  })
  step(`agent config set: model=${model} credential=${cred.id}`)
} else {
  step('agent config already set')
}
const validation = (await api('GET', `/projects/${projectId}/agents/v2/${agentId}/validation`)).data
step('validation: ' + JSON.stringify(validation))

const session = { baseUrl: base, cookie, browserId, projectId, agentId, email, password }
writeFileSync(sessionFile, JSON.stringify(session, null, 2) + '\n')
step(`wrote ${sessionFile}`)
