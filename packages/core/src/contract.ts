/** `@preview-chat/core/contract`: the wire contract's types and the parsers that validate it. */
export * from './wire/contract/index'
