// The yoga handler of /graphql (src/rest/graphql-endpoint.ts mounts it), in a module of its own so that yoga, its
// plugins and the document budgets load on the first /graphql request rather than at start.
import type express from 'express';
import type { RequestHandler } from 'express';
import { createYoga } from 'graphql-yoga';
import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { publicSchema } from '../graphql/schema.js';
import { graphqlLimitPlugins } from '../graphql/limits.js';
import { maskError } from '../graphql/errors.js';
import type { Config } from '../config.js';
import { contextFor } from './request.js';
import { renderGraphiQLPage } from './graphiql-page.js';

/** yoga over the public schema, with GraphiQL, the CORS allow-list, CSRF prevention and the document limits. */
export function yogaHandler(config: Config, basePath: string): RequestHandler {
  const yoga = createYoga({
    schema: publicSchema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    logging: false,
    // Application errors (core/errors.ts) become GraphQL errors with their status here, at the edge.
    maskedErrors: { maskError },
    renderGraphiQL: (options) => renderGraphiQLPage(basePath, { ...options }),
    // An empty allow-list sends no CORS headers at all (browsers then refuse cross-origin calls).
    cors: config.corsOrigins.length
      ? { origin: config.corsOrigins, credentials: true, methods: ['GET', 'POST'] }
      : false,
    plugins: [
      // Form posts, text/plain and header-less GETs (what a page on another site can send without a CORS
      // preflight) must carry this header, which a cross-site form cannot set.
      useCSRFPrevention({ requestHeaders: ['x-graphql-yoga-csrf', 'graphql-require-preflight'] }),
      ...graphqlLimitPlugins(config.graphql),
    ],
    context: ({ req }: { req: express.Request }) => contextFor(req),
  });
  return yoga as unknown as RequestHandler;
}
