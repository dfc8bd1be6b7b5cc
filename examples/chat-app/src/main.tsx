import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { App, prefetchFirstThread } from './App'
import './styles.css'

/**
 * How long the first render waits for the prefetched read. Rendered before it answers, the page
 * shows an empty transcript ("recovering"), then renders again in full once it does; waited for,
 * the first render is the transcript. The read is usually on its way before this code runs
 * (index.html preloads it), so the wait is short; the cap bounds a blank page on a slow network
 * to a fraction of a second, well under the second after which a load feels slow, and past it the
 * page renders as it did without waiting.
 */
const FIRST_READ_WAIT_MS = 300

const root = document.getElementById('root')
if (!root) throw new Error('index.html has no #root element.')
const render = () =>
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  )

const firstRead = prefetchFirstThread()
if (!firstRead) render()
else {
  // Whichever comes first; the prefetch's promise never rejects, and a render on either path
  // keeps a fault anywhere in it from blocking the page.
  const capped = new Promise<void>((resolve) => setTimeout(resolve, FIRST_READ_WAIT_MS))
  void Promise.race([firstRead, capped]).then(render, render)
}
