import type { PushMessage } from '@preview-chat/core/contract'
import type { BackendContext } from './context'
import type { ThreadKey, ThreadRecord, ThreadScope } from './store/types'
import type { PreviewChatUser } from './users'

/** The project and agent a route's path names. */
export interface RouteScope {
  projectId: string
  agentId: string
}

// "Other users cannot read or cancel a private preview turn": a user only ever looks among
// their own threads, so another user's thread is exactly as absent as one that never existed.
export const scopeOf = (route: RouteScope, user: PreviewChatUser): ThreadScope => ({
  ownerId: user.id,
  projectId: route.projectId,
  agentId: route.agentId,
})

/** The address of the user's thread of that id under the route's project and agent. */
export const threadKeyOf = (route: RouteScope, user: PreviewChatUser, threadId: string) => ({
  ...scopeOf(route, user),
  threadId,
})

/** The address of a thread the store gave. */
export const keyOfThread = (thread: ThreadRecord): ThreadKey => ({
  ownerId: thread.ownerId,
  projectId: thread.projectId,
  agentId: thread.agentId,
  threadId: thread.id,
})

/** The user's thread of that id under the route's project and agent, if there is one. */
export function findThread(
  context: BackendContext,
  threadId: string,
  route: RouteScope,
  user: PreviewChatUser,
): Promise<ThreadRecord | undefined> {
  return context.store.readThread(threadKeyOf(route, user, threadId))
}

/** The user's thread of that id; throws the flavor's 404 when the user has none. */
export async function ownedThread(
  context: BackendContext,
  threadId: string,
  route: RouteScope,
  user: PreviewChatUser,
): Promise<ThreadRecord> {
  const thread = await findThread(context, threadId, route, user)
  if (!thread) throw context.flavor.threadNotFound(threadId)
  return thread
}

/**
 * What every tab of the thread's owner hears when an execution of it changes ("It follows later
 * agentExecutionUpdated notifications"): which one, no transcript.
 */
export function executionUpdated(
  thread: ThreadScope & { id: string },
  executionId: string,
): PushMessage {
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

/** Tells every tab of the thread's owner, on every main, that an execution of it changed. */
export function announceExecution(
  context: Pick<BackendContext, 'bus'>,
  thread: ThreadScope & { id: string },
  executionId: string,
): Promise<void> {
  return context.bus.publish(thread.ownerId, executionUpdated(thread, executionId))
}
