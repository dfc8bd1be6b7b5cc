/**
 * Rspress's search (button and panel), with one mend. Its panel listens to Enter on the whole
 * document and opens the current suggestion even when there is none (the panel closed, or open
 * with no result): `Cannot read properties of undefined (reading 'link')` on every Enter of the
 * site, in a live chat's composer too (@rspress/core 2.0.22, the latest). Here an Enter with no
 * current suggestion stops at the document before the panel's listener: the page's own handlers
 * (React's, on its root) have had it already.
 */
import { NoSSR } from '@rspress/core/runtime'
import { SearchButton, SearchPanel } from '@rspress/core/theme-original'
import { useLayoutEffect, useState } from 'react'

export function Search() {
  const [focused, setFocused] = useState(false)
  // A layout effect: registered before the panel's listener (a passive effect of a child that
  // NoSSR mounts a render later, added again after it on each change), so it runs first.
  useLayoutEffect(() => {
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.code !== 'Enter') return
      if (document.querySelector('.rp-suggest-item--current')) return
      event.stopImmediatePropagation()
    }
    document.addEventListener('keydown', onKeyDown)
    return () => document.removeEventListener('keydown', onKeyDown)
  }, [])
  return (
    <>
      <SearchButton setFocused={setFocused} />
      <NoSSR>
        <SearchPanel focused={focused} setFocused={setFocused} />
      </NoSSR>
    </>
  )
}
