// Runs before every test file: Node 20 has no global WebSocket, which @medplum/core reads when it loads.
import { WebSocket } from 'ws';

const g = globalThis as { WebSocket?: unknown };
g.WebSocket ??= WebSocket;

// Vite defines BASE_URL ('/') for front-end code; the server must not take it as its public base URL.
delete process.env.BASE_URL;

// Passwords are hashed at scrypt N=2^14 in tests (the suite signs in thousands of times on two shared cores); the
// production default, 2^17, is asserted in test/brute-force.test.ts. An explicit setting wins.
process.env.PASSWORD_HASH_COST ??= '14';
