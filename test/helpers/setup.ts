// Runs before every test file: Node 20 has no global WebSocket, which @medplum/core reads when it loads.
import { WebSocket } from 'ws';

const g = globalThis as { WebSocket?: unknown };
g.WebSocket ??= WebSocket;

// Vite defines BASE_URL ('/') for front-end code; the server must not take it as its public base URL.
delete process.env.BASE_URL;
