// What the site's bundler gives modules beyond TypeScript's own.
declare module '*.css'
