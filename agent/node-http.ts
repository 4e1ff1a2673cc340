import { createRequire } from 'node:module';

/**
 * `node:http`, required as CommonJS. An ES import of a built-in makes Node
 * build its namespace from every export, and on Node 24 `node:http` has lazy
 * ones (`WebSocket`, `CloseEvent`, `MessageEvent`) whose getters load undici,
 * web streams and assert: 11 MiB of an idle agent's memory, for classes the
 * agent never uses (docs/performance.md). The agent imports `node:http` from
 * here, never directly.
 */
export const http: typeof import('node:http') = createRequire(import.meta.url)('node:http');
