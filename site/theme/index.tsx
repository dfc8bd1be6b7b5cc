// The site's theme: Rspress's own, but for its search (./Search.tsx).
export * from '@rspress/core/theme-original'
export { Search } from './Search'
