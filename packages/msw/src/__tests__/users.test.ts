import { createPreviewChatClient, ssePush } from '@preview-chat/core'
import { describe, expect, it } from 'vitest'
import { setupPreviewChatServer } from '../vitest'
import { createClient, follow, newThread } from './harness'

const chat = setupPreviewChatServer({ deltaMs: 0, snapshotMs: 5 })

describe('a second user [R-MSW-USERS R-MSW-REAL-BACKEND]', () => {
  it("bob cannot read alice's thread: 404, notFound [R-SERVER-PRIVATE R-READ-404]", async () => {
    const { key } = await chat.mock.seed.thread({ user: 'alice' })
    const t = follow(createClient('bob').session(key))
    const state = await t.until((s) => s.notFound, 'not found')
    // An answer, not a read that failed: no readError [R-READ-404-NO-ERROR].
    expect(state.readError).toBeNull()
    expect(state.messages).toEqual([])
    const read = chat.mock.backend.inspect.requests.find((r) => r.route === 'messages')
    expect(read).toMatchObject({ userId: 'bob', status: 404 })
    t.unsubscribe()
  })

  it('acts as the mock user for requests that name none, and actAs switches it', async () => {
    chat.mock.actAs('alice')
    const { key } = await chat.mock.seed.thread()
    // A client that sends no credentials, as a browser story's would.
    const anonymous = () =>
      createPreviewChatClient({
        baseUrl: 'http://localhost/rest',
        push: ssePush(),
        storage: null,
        lingerMs: 0,
        resumeSignal: () => () => {},
      })
    const asAlice = follow(anonymous().session(key))
    expect((await asAlice.until((s) => s.status === 'idle', 'alice reads')).messages).toHaveLength(
      2,
    )
    asAlice.unsubscribe()

    chat.mock.actAs('bob')
    expect(chat.mock.user).toBe('bob')
    const asBob = follow(anonymous().session(key))
    await asBob.until((s) => s.notFound, 'bob gets not found')
    asBob.unsubscribe()
  })

  it('posts as the mock user too (a story whose client sends no credentials)', async () => {
    chat.mock.actAs('alice')
    const client = createPreviewChatClient({
      baseUrl: 'http://localhost/rest',
      push: false,
      storage: null,
      lingerMs: 0,
      resumeSignal: () => () => {},
    })
    const session = client.session({ ...newThread(), isNew: true })
    const t = follow(session)
    session.setDraft('Hello')
    expect((await session.submit()).outcome).toBe('accepted')
    await t.until((s) => s.status === 'idle', 'the end of the turn')
    expect(chat.mock.backend.inspect.requests.find((r) => r.route === 'chat')).toMatchObject({
      userId: 'alice',
      status: 200,
    })
    t.unsubscribe()
  })

  it('without a mock user, a request that names none is a 401', async () => {
    const response = await fetch('http://localhost/rest/projects/p/agents/v2/a/chat/t/messages')
    expect(response.status).toBe(401)
  })
})
