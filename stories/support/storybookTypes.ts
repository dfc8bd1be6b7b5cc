// The Storybook types that .storybook/ uses: it sits outside this package, where pnpm installed
// Storybook, so it imports them through here.
export type { Decorator, Loader, Preview, StorybookConfig } from '@storybook/react-vite'
