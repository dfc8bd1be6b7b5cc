import { defineConfig } from '@rspress/core'
import mermaid from 'rspress-plugin-mermaid'
import { repoLinks } from './repo-links'

const guides = [
  ['getting-started', 'Getting started (React + Vite)'],
  ['production-vite', 'Production: Vite SPA'],
  ['nextjs', 'Production: Next.js (app router)'],
  ['react-router', 'Production: React Router 7 (SSR)'],
  ['own-backend', 'Production: your own backend'],
  ['server', 'The reference server and its CLI'],
  ['assistant-ui', 'assistant-ui'],
  ['queue', 'The message queue'],
  ['styling', "Styling the kit's primitives"],
  ['testing', 'Testing with the msw kit and Vitest'],
  ['storybook', 'Storybook'],
  ['n8n', 'The released platform (n8n 2.41)'],
  ['recovery', 'How recovery works'],
  ['migrating', 'Migrating between versions'],
] as const

export default defineConfig({
  root: 'docs',
  title: 'preview-chat',
  description:
    "Keep an AI agent's answer alive in a React chat UI across reloads, network drops and a second tab.",
  lang: 'en',
  plugins: [mermaid({ mermaidConfig: { securityLevel: 'strict' } })],
  icon: '/icon.svg',
  markdown: {
    remarkPlugins: [repoLinks],
    // The e2e (e2e/docs.spec.ts) follows every internal link of the built site.
    link: { checkDeadLinks: false },
  },
  route: {
    // The API reference's own README pages are its index pages (TypeDoc's layout).
    cleanUrls: false,
  },
  themeConfig: {
    nav: [
      { text: 'Guides', link: '/guide/getting-started' },
      { text: 'API', link: '/api/' },
      { text: 'Rules', link: '/rules' },
      { text: 'Errors', link: '/errors' },
      { text: 'Decisions', link: '/decisions/' },
    ],
    sidebar: {
      '/guide/': [
        { text: 'Guides', items: guides.map(([page, text]) => ({ text, link: `/guide/${page}` })) },
      ],
    },
  },
  builderConfig: {
    // Workspace packages are read from their sources, as the examples and tests read them.
    resolve: { conditionNames: ['@preview-chat/source', '...'] },
    performance: { buildCache: false },
  },
})
