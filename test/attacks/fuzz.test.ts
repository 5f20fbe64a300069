// Property-based hostile input (fast-check) for every route that reads a client's document: the FHIR writes
// (CodeSystem, ValueSet, Bot; POST and PUT), inline $expand, $expand's query, bot input of each content type, the
// sign-in and token forms, the /oauth2/authorize request and its sign-in form, GraphQL variables, and client
// applications' names and redirect URIs. Valid templates
// with one element replaced by something hostile (wrong types, lone surrogates, NUL, long and deep values, removed
// elements), plus raw hostile JSON. Every answer must be below 500, and /healthz stays fast between batches. A
// fixed seed and FUZZ_RUNS inputs (default below) keep CI reproducible (FUZZ_SEED, FUZZ_RUNS=100000 for a longer
// soak); a failure prints the seed and the shrunk input to replay.
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, onPostgres, useTestServer } from '../helpers/server.js';

// SMTP configured (a closed port: a reset email fails after the answer, as an unreachable mail server would), so
// that POST /auth/resetpassword goes its whole way instead of answering 501.
const server = useTestServer({ signIn: true, config: { smtpUrl: 'smtp://127.0.0.1:9' } });

const SEED = Number(process.env.FUZZ_SEED ?? 20261127);
// 10,000 on the embedded database; the PostgreSQL suite runs the same routes over the other driver, 2,000 of them.
const RUNS = Number(process.env.FUZZ_RUNS ?? (onPostgres ? 2_000 : 10_000));

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Strings a careless or hostile client sends: any UTF-16 units (lone surrogates too), NUL, long, index-breaking. */
const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('', '\u0000', '\ud800', 'a\udc00b', ' ', '%', '|', '$', '\\', '"', 'http://x', '*'),
  fc.integer({ min: 2_000, max: 6_000 }).map((n) => 'k'.repeat(n)),
  fc.integer({ min: 1, max: 30 }).map((n) => '('.repeat(n) + 'a+)+' + '$'),
);

/** Any JSON value, built from hostile strings. */
const hostileValue: fc.Arbitrary<Json> = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json> },
  { weight: 3, arbitrary: hostileString },
  {
    weight: 1,
    arbitrary: fc.constantFrom<Json>(null, true, -1, 1e308, 2 ** 53 + 1, 0.5, [], {}, [null], [[[]]]),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 50, max: 400 }).map((d) => JSON.parse('['.repeat(d) + ']'.repeat(d))),
  },
  { weight: 1, arbitrary: fc.array(hostileString, { maxLength: 5 }) },
  { weight: 1, arbitrary: fc.dictionary(hostileString, hostileString, { maxKeys: 4 }) },
);

/** Every path (keys and indexes) of a JSON value. */
function paths(v: Json, at: Array<string | number> = [], out: Array<Array<string | number>> = []) {
  out.push(at);
  if (Array.isArray(v)) v.forEach((x, i) => paths(x, [...at, i], out));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) paths(x, [...at, k], out);
  return out;
}

/** `template` with the element at `path` replaced by `value` (removed when `value` is undefined). */
function replaced(template: Json, path: Array<string | number>, value: Json | undefined): Json {
  if (path.length === 0) return value ?? null;
  const copy = structuredClone(template) as Record<string | number, Json>;
  let node = copy;
  for (const k of path.slice(0, -1)) node = node[k] as Record<string | number, Json>;
  const last = path[path.length - 1];
  if (value === undefined) {
    if (Array.isArray(node)) node.splice(Number(last), 1);
    else delete node[last];
  } else node[last] = value;
  return copy;
}

/** A template with one element replaced or removed, or, sometimes, a new element beside the others. */
function mutations(template: Json): fc.Arbitrary<Json> {
  const all = paths(template);
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc
        .tuple(fc.constantFrom(...all), fc.option(hostileValue, { nil: undefined, freq: 5 }))
        .map(([p, v]) => replaced(template, p, v)),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(hostileString, hostileValue)
        .map(([k, v]) => ({ ...(template as object), [k]: v }) as Json),
    },
    { weight: 1, arbitrary: hostileValue },
  );
}

const codeSystem: Json = {
  resourceType: 'CodeSystem',
  url: 'http://example.org/fuzz/cs',
  version: '1',
  status: 'active',
  content: 'complete',
  identifier: [{ system: 'urn:x', value: 'y' }],
  property: [{ code: 'p', type: 'string' }],
  concept: [
    {
      code: 'a',
      display: 'Alpha',
      concept: [{ code: 'b', display: 'Beta', property: [{ code: 'p', valueString: 'v' }] }],
    },
    { code: 'c', display: 'Gamma', designation: [{ language: 'de', value: 'Gamma' }] },
  ],
};
const valueSet: Json = {
  resourceType: 'ValueSet',
  url: 'http://example.org/fuzz/vs',
  status: 'active',
  compose: {
    inactive: false,
    include: [
      { system: 'http://example.org/fuzz/cs', concept: [{ code: 'a', display: 'A' }] },
      { system: 'http://example.org/fuzz/cs', filter: [{ property: 'concept', op: 'is-a', value: 'a' }] },
      { valueSet: ['http://example.org/fuzz/vs0'] },
    ],
    exclude: [{ system: 'http://example.org/fuzz/cs', concept: [{ code: 'c' }] }],
  },
};
const bot: Json = {
  resourceType: 'Bot',
  name: 'fuzz',
  identifier: [{ system: 'urn:fuzz', value: 'bot' }],
  code: 'export async function handler(medplum, event) { return event.input; }',
};

let csId = '';
let vsId = '';
let botId = '';
let appId = '';
const statuses = new Map<number, number>();
let inputs = 0;
let worstHealthMs = 0;

/** Sends one fuzzed request; the property: no 5xx. */
async function send(
  method: string,
  path: string,
  body: string | undefined,
  contentType?: string,
): Promise<boolean> {
  const res = await fetch(`${server.base}${path}`, {
    method,
    // /oauth2/authorize answers some inputs with a redirect to the client: the answer is judged, not followed.
    redirect: 'manual',
    headers: {
      authorization: `Bearer ${server.token}`,
      ...(contentType ? { 'content-type': contentType } : {}),
    },
    body,
  });
  await res.arrayBuffer();
  inputs++;
  statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
  if (inputs % 250 === 0) {
    const t0 = performance.now();
    const h = await fetch(`${server.base}healthz`);
    await h.arrayBuffer();
    worstHealthMs = Math.max(worstHealthMs, performance.now() - t0);
  }
  return res.status < 500;
}

beforeAll(async () => {
  const post = async (type: string, body: Json) => {
    const r = await call(server.base, 'POST', `fhir/R4/${type}`, { token: server.token, body });
    if (r.status !== 201) throw new Error(`${type}: ${r.status} ${r.text}`);
    return r.body.id as string;
  };
  csId = await post('CodeSystem', codeSystem);
  vsId = await post('ValueSet', valueSet);
  botId = await post('Bot', bot);
  const app = await call(server.base, 'POST', 'graphql', {
    token: server.token,
    headers: { 'content-type': 'application/json' },
    body: {
      query:
        'mutation { createClientApplication(name: "Fuzz app", type: public, ' +
        'redirectUris: ["http://localhost:1/cb"]) { client { id } } }',
    },
  });
  appId = app.body.data.createClientApplication.client.id;
});

/** A valid authorization request (and sign-in form fields), to mutate one parameter of. */
const authorizeRequest = (): Record<string, Json> => ({
  response_type: 'code',
  client_id: appId,
  redirect_uri: 'http://localhost:1/cb',
  state: 's',
  code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
  code_challenge_method: 'S256',
  scope: 'openid email',
  nonce: 'n',
  login_hint: 'a@example.com',
  prompt: 'login',
  step: 'password',
  csrf: '1.xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',
  email: 'a@example.com',
  password: 'p',
  login: 'l',
  token: '123456',
});

/** The targets, each with its share of the runs. */
const targets: Array<{
  name: string;
  property: () => fc.IAsyncProperty<[Json]> | fc.IAsyncProperty<[string]>;
}> = [
  {
    name: 'POST CodeSystem',
    property: () =>
      fc.asyncProperty(mutations(codeSystem), (b) =>
        send('POST', 'fhir/R4/CodeSystem', JSON.stringify(b), 'application/fhir+json'),
      ),
  },
  {
    name: 'PUT CodeSystem',
    property: () =>
      fc.asyncProperty(mutations({ ...(codeSystem as object), id: csId } as Json), (b) =>
        send('PUT', `fhir/R4/CodeSystem/${csId}`, JSON.stringify(b), 'application/fhir+json'),
      ),
  },
  {
    name: 'POST ValueSet',
    property: () =>
      fc.asyncProperty(mutations(valueSet), (b) =>
        send('POST', 'fhir/R4/ValueSet', JSON.stringify(b), 'application/fhir+json'),
      ),
  },
  {
    name: 'PUT ValueSet',
    property: () =>
      fc.asyncProperty(mutations({ ...(valueSet as object), id: vsId } as Json), (b) =>
        send('PUT', `fhir/R4/ValueSet/${vsId}`, JSON.stringify(b), 'application/fhir+json'),
      ),
  },
  {
    name: 'POST Bot',
    property: () =>
      fc.asyncProperty(mutations(bot), (b) =>
        send('POST', 'fhir/R4/Bot', JSON.stringify(b), 'application/fhir+json'),
      ),
  },
  {
    name: 'inline $expand',
    property: () =>
      fc.asyncProperty(
        mutations({
          resourceType: 'Parameters',
          parameter: [
            { name: 'valueSet', resource: valueSet },
            { name: 'filter', valueString: 'a' },
            { name: 'count', valueInteger: 5 },
          ],
        }),
        (b) => send('POST', 'fhir/R4/ValueSet/$expand', JSON.stringify(b), 'application/fhir+json'),
      ),
  },
  {
    name: 'GET $expand',
    property: () =>
      fc.asyncProperty(
        fc.dictionary(
          fc.constantFrom(
            'url',
            'filter',
            'offset',
            'count',
            'displayLanguage',
            'activeOnly',
            'includeDesignations',
            'system-version',
            'x',
          ),
          hostileString,
          { maxKeys: 4 },
        ),
        (q) =>
          send(
            'GET',
            `fhir/R4/ValueSet/$expand?${new URLSearchParams({ url: 'http://example.org/fuzz/vs', ...q })}`,
            undefined,
          ),
      ) as unknown as fc.IAsyncProperty<[Json]>,
  },
  {
    name: 'bot input',
    property: () =>
      fc.asyncProperty(
        fc.tuple(
          fc.constantFrom(
            'application/json',
            'application/fhir+json',
            'text/plain',
            'application/x-www-form-urlencoded',
            'x-application/hl7-v2+er7',
          ),
          fc.oneof(
            hostileValue.map((v) => JSON.stringify(v)),
            hostileString,
            fc.constant('MSH|^~\\&|A|B|C|D|20260101||ADT^A01|1|P|2.5\rPID|||123'),
          ),
        ),
        ([type, text]) => send('POST', `fhir/R4/Bot/${botId}/$execute`, text, type),
      ) as unknown as fc.IAsyncProperty<[Json]>,
  },
  {
    name: 'sign-in, token, password and second-factor forms',
    property: () =>
      fc.asyncProperty(
        fc.tuple(
          fc.constantFrom(
            'auth/login',
            'oauth2/token',
            'oauth2/revoke',
            'oauth2/introspect',
            'auth/changepassword',
            'auth/resetpassword',
            'auth/setpassword',
            'auth/mfa/verify',
            'auth/mfa/enroll',
            'auth/mfa/disable',
          ),
          fc.constantFrom('application/json', 'application/x-www-form-urlencoded'),
          fc.dictionary(
            fc.constantFrom(
              'email',
              'password',
              'grant_type',
              'code',
              'code_verifier',
              'client_id',
              'client_secret',
              'refresh_token',
              'token',
              'scope',
              'projectId',
              'oldPassword',
              'newPassword',
              'id',
              'secret',
              'login',
            ),
            hostileValue,
            { maxKeys: 5 },
          ),
        ),
        ([path, type, fields]) =>
          send(
            'POST',
            path,
            type === 'application/json'
              ? JSON.stringify(fields)
              : new URLSearchParams(
                  Object.entries(fields).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
                ).toString(),
            type,
          ),
      ) as unknown as fc.IAsyncProperty<[Json]>,
  },
  {
    name: 'authorize request and sign-in form',
    property: () =>
      fc.asyncProperty(
        fc.tuple(fc.boolean(), fc.constantFrom(...Object.keys(authorizeRequest())), fc.option(hostileValue)),
        ([post, key, value]) => {
          const fields = authorizeRequest();
          if (value === null) delete fields[key];
          else fields[key] = value;
          const form = new URLSearchParams(
            Object.entries(fields).flatMap(([k, v]) =>
              Array.isArray(v)
                ? v.map((x) => [k, String(x)])
                : [[k, typeof v === 'string' ? v : JSON.stringify(v)]],
            ),
          ).toString();
          return post
            ? send('POST', 'oauth2/authorize', form, 'application/x-www-form-urlencoded')
            : send('GET', `oauth2/authorize?${form}`, undefined);
        },
      ) as unknown as fc.IAsyncProperty<[Json]>,
  },
  {
    name: 'GraphQL variables',
    property: () =>
      fc.asyncProperty(fc.tuple(fc.constantFrom(codeSystem, valueSet, bot), hostileValue), ([tpl, v]) =>
        send(
          'POST',
          'graphql',
          JSON.stringify({
            query: 'mutation ($t: String!, $r: JSON!) { createResource(resourceType: $t, resource: $r) }',
            variables: {
              t: (tpl as { resourceType: string }).resourceType,
              r: v === null ? tpl : replaced(tpl, ['url'], v),
            },
          }),
          'application/json',
        ),
      ) as unknown as fc.IAsyncProperty<[Json]>,
  },
  {
    name: 'client application input',
    property: () =>
      fc.asyncProperty(
        fc.tuple(
          fc.oneof(hostileString, fc.constant('Fuzzed client')),
          fc.array(
            fc.oneof(
              hostileString,
              fc.webUrl({ withFragments: true, withQueryParameters: true }),
              fc.constantFrom(
                'http://localhost:1/cb',
                'https://[::1]/',
                'HTTPS://X.EXAMPLE/',
                'https://x/\ud800',
              ),
            ),
            { maxLength: 12 },
          ),
        ),
        ([name, uris]) =>
          send(
            'POST',
            'graphql',
            JSON.stringify({
              query:
                'mutation ($n: String!, $u: [String!]) { createClientApplication(name: $n, redirectUris: $u) ' +
                '{ client { id } } }',
              variables: { n: name, u: uris },
            }),
            'application/json',
          ),
      ) as unknown as fc.IAsyncProperty<[Json]>,
  },
];

describe(`fuzzed input (seed ${SEED}, ${RUNS} inputs)`, () => {
  for (const [k, t] of targets.entries()) {
    it(`${t.name}: never a 5xx`, async () => {
      await fc.assert(t.property() as fc.IAsyncProperty<[Json]>, {
        seed: SEED + k,
        numRuns: Math.ceil(RUNS / targets.length),
        endOnFailure: true,
      });
    }, 600_000);
  }

  it('/healthz stayed fast between batches; the count of inputs and answers', () => {
    console.info(
      `[fuzz] seed ${SEED}: ${inputs} inputs, answers ${JSON.stringify(Object.fromEntries([...statuses].sort()))}, ` +
        `worst /healthz ${worstHealthMs.toFixed(0)} ms`,
    );
    expect(inputs).toBeGreaterThanOrEqual(RUNS);
    expect([...statuses.keys()].filter((s) => s >= 500)).toEqual([]);
    expect(worstHealthMs).toBeLessThan(500);
  });
});
