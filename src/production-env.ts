// Imported first by main.ts: NODE_ENV defaults to production for the server process, before any library reads
// it (graphql-js, for one, swaps its development-mode instanceof checks for plain ones: ~3% of an $expand request).
/** True when NODE_ENV was unset and is defaulted here (the operator did not ask for production explicitly). */
export const nodeEnvDefaulted = process.env.NODE_ENV === undefined;
process.env.NODE_ENV ??= 'production';
