/** Starts the run's Redis; resolves with the teardown that stops it. */
export default function setup(): Promise<() => Promise<void>>
