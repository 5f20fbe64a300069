// FHIR R4 REST: metadata, and create/read/update/delete/search for the registered resource types, each running a
// GraphQL operation. Operation routes ($expand, $execute, ...) are registered before these by their features.
import type { IRouter, RequestHandler } from 'express';
import { graphql } from '../generated/gql/index.js';
import { badRequest } from '../core/errors.js';
import { isFhirId } from './registry.js';
import type { FhirResource } from './types.js';
import { runOperation } from '../graphql/executor.js';
import type { HttpApi } from '../rest/api.js';
import { contextFor } from '../rest/request.js';
import { asyncHandler, requireAuth } from '../rest/middleware.js';
import { operationOutcome, sendFhir, sendFhirStreamed } from '../rest/outcome.js';
import { allowStreaming } from './lazy-json.js';
import { metadataRoutes } from './metadata-routes.js';
import { fhirBaseUrl } from '../config.js';

const ReadDoc = graphql(`
  query RestRead($resourceType: String!, $id: String!, $summary: String, $elements: String) {
    readResource(resourceType: $resourceType, id: $id, summary: $summary, elements: $elements)
  }
`);
const SearchDoc = graphql(`
  query RestSearch(
    $resourceType: String!
    $url: String
    $version: String
    $identifier: String
    $name: String
    $count: Int
    $offset: Int
    $summary: String
    $elements: String
  ) {
    searchResources(
      resourceType: $resourceType
      url: $url
      version: $version
      identifier: $identifier
      name: $name
      count: $count
      offset: $offset
      summary: $summary
      elements: $elements
    )
  }
`);
const CreateDoc = graphql(`
  mutation RestCreate($resourceType: String!, $resource: JSON!) {
    createResource(resourceType: $resourceType, resource: $resource)
  }
`);
const UpdateDoc = graphql(`
  mutation RestUpdate($resourceType: String!, $id: String!, $resource: JSON!) {
    updateResource(resourceType: $resourceType, id: $id, resource: $resource)
  }
`);
const DeleteDoc = graphql(`
  mutation RestDelete($resourceType: String!, $id: String!) {
    deleteResource(resourceType: $resourceType, id: $id)
  }
`);

const SEARCH_PARAMS = new Set([
  'url',
  'version',
  'identifier',
  'name',
  '_count',
  '_offset',
  '_summary',
  '_elements',
  '_format',
  '_pretty',
]);

function intParam(v: unknown, name: string): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !/^\d+$/.test(v))
    throw badRequest(`${name} must be a non-negative integer`, [name]);
  return Number(v);
}

function stringParam(v: unknown, name: string): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw badRequest(`${name} must be given once`, [name]);
  return v;
}

function checkType(type: string): void {
  if (!/^[A-Z][A-Za-z]{1,63}$/.test(type)) throw badRequest(`Invalid resource type: ${type}`);
}

function checkId(id: string): void {
  if (!isFhirId(id)) throw badRequest(`Invalid resource id: ${id}`, ['id']);
}

/** The context of a FHIR request whose response may stream (big CodeSystems' concepts). */
function streamingContext(req: Parameters<RequestHandler>[0]): ReturnType<typeof contextFor> {
  const ctx = contextFor(req);
  allowStreaming(ctx);
  return ctx;
}

function withHeaders(res: Parameters<RequestHandler>[1], resource: FhirResource): void {
  if (resource.meta?.versionId) res.setHeader('ETag', `W/"${resource.meta.versionId}"`);
  if (resource.meta?.lastUpdated)
    res.setHeader('Last-Modified', new Date(resource.meta.lastUpdated).toUTCString());
}

/** Registers the generic FHIR routes under the FHIR base (after every feature's operations: `/:type` matches
 * them too). */
export function fhirRoutes(r: IRouter, base: string, _api: HttpApi, jsonParser: RequestHandler): void {
  metadataRoutes(r, base);

  r.get(
    `${base}/:type`,
    requireAuth,
    asyncHandler(async (req, res) => {
      checkType(String(req.params.type));
      for (const k of Object.keys(req.query)) {
        if (!SEARCH_PARAMS.has(k)) throw badRequest(`Unknown search parameter: ${k}`, [k]);
      }
      const q = req.query;
      const data = await runOperation(
        SearchDoc,
        {
          resourceType: String(req.params.type),
          url: stringParam(q.url, 'url'),
          version: stringParam(q.version, 'version'),
          identifier: stringParam(q.identifier, 'identifier'),
          name: stringParam(q.name, 'name'),
          count: intParam(q._count, '_count'),
          offset: intParam(q._offset, '_offset'),
          summary: stringParam(q._summary, '_summary'),
          elements: stringParam(q._elements, '_elements'),
        },
        streamingContext(req),
      );
      await sendFhirStreamed(res, 200, data.searchResources);
    }),
  );

  r.post(
    `${base}/:type`,
    requireAuth,
    jsonParser,
    asyncHandler(async (req, res) => {
      checkType(String(req.params.type));
      const data = await runOperation(
        CreateDoc,
        { resourceType: String(req.params.type), resource: requireBody(req.body) },
        streamingContext(req),
      );
      const created = data.createResource as FhirResource;
      withHeaders(res, created);
      res.setHeader('Location', `${fhirBaseUrl(req.api.config)}/${created.resourceType}/${created.id}`);
      await sendFhirStreamed(res, 201, created);
    }),
  );

  r.get(
    `${base}/:type/:id`,
    requireAuth,
    asyncHandler(async (req, res) => {
      checkType(String(req.params.type));
      checkId(String(req.params.id));
      const data = await runOperation(
        ReadDoc,
        {
          resourceType: String(req.params.type),
          id: String(req.params.id),
          summary: stringParam(req.query._summary, '_summary'),
          elements: stringParam(req.query._elements, '_elements'),
        },
        streamingContext(req),
      );
      const resource = data.readResource as FhirResource;
      withHeaders(res, resource);
      await sendFhirStreamed(res, 200, resource);
    }),
  );

  r.put(
    `${base}/:type/:id`,
    requireAuth,
    jsonParser,
    asyncHandler(async (req, res) => {
      checkType(String(req.params.type));
      checkId(String(req.params.id));
      const data = await runOperation(
        UpdateDoc,
        { resourceType: String(req.params.type), id: String(req.params.id), resource: requireBody(req.body) },
        streamingContext(req),
      );
      const resource = data.updateResource as FhirResource;
      withHeaders(res, resource);
      await sendFhirStreamed(res, 200, resource);
    }),
  );

  r.delete(
    `${base}/:type/:id`,
    requireAuth,
    asyncHandler(async (req, res) => {
      checkType(String(req.params.type));
      checkId(String(req.params.id));
      await runOperation(
        DeleteDoc,
        { resourceType: String(req.params.type), id: String(req.params.id) },
        contextFor(req),
      );
      sendFhir(
        res,
        200,
        operationOutcome(
          'information',
          'informational',
          `Deleted ${String(req.params.type)}/${String(req.params.id)}`,
        ),
      );
    }),
  );
}

function requireBody(body: unknown): unknown {
  if (body === undefined) {
    throw badRequest(
      'Request body must be a FHIR resource with Content-Type application/fhir+json or application/json',
    );
  }
  return body;
}
