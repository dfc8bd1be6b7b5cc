import type { PushMessage } from '@preview-chat/core/contract'
import type { BackendContext } from './context'
import { threadKey, type ThreadRecord, type ThreadScope } from './store'
import type { PreviewChatUser } from './users'

/** The project and agent a route's path names. */
export interface RouteScope {
  projectId: string
  agentId: string
}

// "Other users cannot read or cancel a private preview turn": a user only ever looks among
// their own threads, so another user's thread is exactly as absent as one that never existed.
const scopeOf = (route: RouteScope, user: PreviewChatUser): ThreadScope => ({
  ownerId: user.id,
  projectId: route.projectId,
  agentId: route.agentId,
})

/** The user's thread of that id under the route's project and agent, if there is one. */
export function findThread(
  context: BackendContext,
  threadId: string,
  route: RouteScope,
  user: PreviewChatUser,
): ThreadRecord | undefined {
  return context.store.threads.get(threadKey(scopeOf(route, user), threadId))
}

/** The user's thread of that id; throws the flavor's 404 when the user has none. */
export function ownedThread(
  context: BackendContext,
  threadId: string,
  route: RouteScope,
  user: PreviewChatUser,
): ThreadRecord {
  const thread = findThread(context, threadId, route, user)
  if (!thread) throw context.flavor.threadNotFound(threadId)
  return thread
}

/** A new, empty thread of the user's ("A preview thread belongs to the user who started it"). */
export function createThread(
  context: BackendContext,
  threadId: string,
  route: RouteScope,
  user: PreviewChatUser,
): ThreadRecord {
  const thread: ThreadRecord = {
    id: threadId,
    projectId: route.projectId,
    agentId: route.agentId,
    ownerId: user.id,
    createdAt: new Date(context.now()).toISOString(),
    messages: [],
    openSuspensions: [],
    activeExecutionId: null,
  }
  context.store.threads.set(threadKey(scopeOf(route, user), threadId), thread)
  return thread
}

/** A suspension that was resumed or cancelled is no longer open, nor waiting in its part. */
export function closeSuspension(thread: ThreadRecord, runId: string, rejection?: string): void {
  const suspension = thread.openSuspensions.find((open) => open.runId === runId)
  thread.openSuspensions = thread.openSuspensions.filter((open) => open.runId !== runId)
  if (!suspension) return
  for (const message of thread.messages) {
    for (const part of message.content) {
      if (part.type !== 'tool-call' || part.toolCallId !== suspension.toolCallId) continue
      delete part.suspendPayload
      if (rejection !== undefined) {
        part.state = 'rejected'
        part.error = rejection
      }
    }
  }
}

/**
 * What every tab of the thread's owner hears when an execution of it changes ("It follows later
 * agentExecutionUpdated notifications"): which one, no transcript.
 */
export function executionUpdated(thread: ThreadRecord, executionId: string): PushMessage {
  return {
    type: 'agentExecutionUpdated',
    data: {
      projectId: thread.projectId,
      agentId: thread.agentId,
      threadId: thread.id,
      executionId,
    },
  }
}
