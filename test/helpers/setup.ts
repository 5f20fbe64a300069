// Runs before every test file: Node 20 has no global WebSocket, which @medplum/core reads when it loads.
import { WebSocket } from 'ws';

const g = globalThis as { WebSocket?: unknown };
g.WebSocket ??= WebSocket;

// Vite defines BASE_URL ('/') for front-end code; the server must not take it as its public base URL.
delete process.env.BASE_URL;

// Passwords are hashed at scrypt N=2^14, p=1 in tests (the suite signs in thousands of times on two shared cores);
// the production default, N=2^15 with p=3, is asserted in test/auth/throttle.test.ts. An explicit setting wins.
process.env.PASSWORD_HASH_COST ??= '14';
process.env.PASSWORD_HASH_PARALLELISM ??= '1';
