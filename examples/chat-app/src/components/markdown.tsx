import Markdown, { type Components } from 'react-markdown'
import remarkGfm from 'remark-gfm'

// Links from an answer open in a new tab and tell the target nothing about this page.
const markdownComponents: Components = {
  a: ({ node: _, ...props }) => <a {...props} target="_blank" rel="noopener noreferrer" />,
}

/**
 * An answer's text as markdown (with GitHub's tables, task lists, strikethrough): react-markdown
 * builds React elements from the syntax tree, never HTML strings, and escapes raw HTML in the
 * text, and its URL filter drops `javascript:` and other unsafe links. A chunk of its own, loaded
 * by `parts.tsx` when an answer first comes near the viewport: react-markdown, remark-gfm and
 * their micromark tree are most of the demo's code, and a reload must not wait for them.
 */
export function MarkdownText({ text }: { text: string }) {
  return (
    <Markdown remarkPlugins={[remarkGfm]} components={markdownComponents}>
      {text}
    </Markdown>
  )
}
