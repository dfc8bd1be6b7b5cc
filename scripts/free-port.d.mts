/** A port the kernel says is free on 127.0.0.1 right now: asked for with port 0, then released. */
export function freePort(): Promise<number>
