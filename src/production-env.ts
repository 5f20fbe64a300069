// Imported first by main.ts: NODE_ENV defaults to production for the server process, before any library reads
// it (graphql-js, for one, swaps its development-mode instanceof checks for plain ones: ~3% of an $expand request).
process.env.NODE_ENV ??= 'production';
