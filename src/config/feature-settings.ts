// The settings of the capabilities, part of the one settings table (settings.ts): terminology, bots and GraphQL,
// mostly what one request or one project may cost. The same shape as there: a new setting is one entry.
import { bool, byteSize, int, introspectionMode, size, text, type Env, type Topic } from './readers.js';

/** The terminology, bots and GraphQL sections of the table. */
export const FEATURE_TOPICS = [
  {
    title: 'Terminology',
    about:
      'The core definitions loaded at start, the code system indexes in memory, and what one `$expand` may cost.',
    settings: [
      {
        env: 'LOAD_CORE_TERMINOLOGY',
        key: 'loadCoreTerminology',
        read: bool(true),
        doc: 'load the FHIR R4 core CodeSystems and ValueSets',
      },
      {
        env: 'TERMINOLOGY_INDEX_BUDGET_MB',
        key: 'terminologyIndexBudgetMb',
        read: int(1024),
        doc:
          'memory budget of the code system indexes held; beyond it the least recently resolved are dropped ' +
          '(re-read from `DATA_DIR/terminology-index` when next used)',
      },
      {
        env: 'EXPAND_MAX_UNPAGED',
        key: 'expandMaxUnpaged',
        read: int(10_000),
        doc: 'largest `$expand` answered without `count` (above it: 422 `too-costly`)',
      },
      {
        env: 'EXPAND_MAX_COUNT',
        key: 'expandMaxCount',
        read: int(10_000),
        doc: 'largest `$expand` `count` (above it: 400 naming `count` and the limit; page with `offset`)',
      },
      {
        env: 'EXPAND_FILTER_MAX_CHARS',
        key: 'expandFilterMaxLength',
        read: int(1000),
        doc: 'longest `$expand` `filter` in characters (above it: 400 naming the limit)',
      },
      {
        env: 'EXPAND_FILTER_MAX_WORDS',
        key: 'expandFilterMaxWords',
        read: int(20),
        doc: 'most distinct words in an `$expand` `filter` (above it: 400 naming the limit)',
      },
      {
        env: 'EXPAND_REGEX_MAX_LENGTH',
        key: 'expandRegexMaxLength',
        read: int(1000),
        doc: 'longest `regex` pattern of a ValueSet compose filter (above it: 400 naming the limit)',
      },
      {
        env: 'EXPAND_REGEX_BUDGET_MS',
        key: 'expandRegexBudgetMs',
        read: int(2000),
        doc:
          'time budget (ms) of one compose `regex` filter, the event loop yielded every ~10 ms (above it: 422 ' +
          '`too-costly`)',
      },
      {
        env: 'EXPAND_MAX_COMPOSE_CLAUSES',
        key: 'expandMaxComposeClauses',
        read: int(1000),
        doc:
          'most compose clauses (include, exclude, filter, valueSet entries) the value sets of one expansion may ' +
          'have together (over it: 422 `too-costly`)',
      },
      {
        env: 'TX_RESOURCE_MAX_CONCEPTS',
        key: 'txResourceMaxConcepts',
        read: int(20_000),
        doc:
          'most concepts the `tx-resource` CodeSystems of one `$expand` may hold together (over it: 422 ' +
          '`too-costly`)',
      },
      {
        env: 'TERMINOLOGY_BATCH_MAX',
        key: 'terminologyBatchMax',
        read: int(1_000),
        doc:
          'most `validation` parameters one `$batch-validate-code` request may carry (over it: 422 ' +
          '`too-costly`); the checks run one after another',
      },
      {
        env: 'VALUESET_MAX_ENTRIES',
        key: 'valueSetMaxEntries',
        read: int(50_000),
        doc:
          'most enumerated concepts (`compose.include/exclude.concept`) and `expansion.contains` entries one ' +
          'ValueSet may hold, stored, inline or `tx-resource` (over it: 422 `too-costly`)',
      },
      {
        env: 'INLINE_MAX_CONCEPTS',
        key: 'inlineMaxConcepts',
        read: int(20_000),
        doc:
          'most concepts of a CodeSystem that GraphQL or a bot gets whole (over it: 422 `too-costly`; REST streams ' +
          'any size)',
      },
      {
        env: 'SNOMED_LANGUAGE_REFSET',
        key: 'snomedLanguageRefset',
        read: text('900000000000509007'),
        doc:
          '`npm run import` of a SNOMED CT RF2 release: the language reference set whose preferred synonym is a ' +
          "concept's display (`900000000000509007` en-US, `900000000000508004` en-GB); `--language-refset` overrides it",
      },
    ],
  },
  {
    title: 'Bots',
    about: 'What a bot may reach and keep, and the budgets that share one instance between projects.',
    settings: [
      {
        env: 'BOT_JOB_RUNNER',
        key: 'botJobRunner',
        read: bool(true),
        doc: 'this instance runs queued asynchronous bot jobs',
      },
      {
        env: 'BOT_FETCH_ALLOW_PRIVATE',
        key: 'botFetchAllowPrivate',
        read: bool(false),
        doc: "let bots' `fetch` reach loopback/private/link-local addresses",
      },
      {
        env: 'BOT_LOG_LIMIT',
        key: 'botLogLimit',
        read: int(64 * 1024),
        doc: "bytes of a bot's console output kept per execution",
      },
      {
        env: 'BOT_MAX_CONCURRENT',
        key: 'botMaxConcurrent',
        read: int(64),
        doc: 'bot executions running at once on this instance, all projects (over it: 503 with `Retry-After`)',
      },
      {
        env: 'BOT_PROJECT_MAX_CONCURRENT',
        key: 'botProjectMaxConcurrent',
        read: int(16),
        doc: 'bot executions running at once per project (over it: 429 with `Retry-After`)',
      },
      {
        env: 'BOT_MEMORY_BUDGET_MB',
        key: 'botMemoryBudgetMb',
        read: int(2048),
        doc:
          'MB of bot isolate heap limits (`memoryLimit`) held at once on this instance, warm or busy (over it: ' +
          '503)',
      },
      {
        env: 'BOT_PROJECT_MEMORY_MB',
        key: 'botProjectMemoryMb',
        read: int(1024),
        doc: 'the same, per project (over it: 429); at least the largest `memoryLimit` (1024)',
      },
      {
        env: 'BOT_INPUT_LIMIT',
        key: 'botInputLimit',
        read: byteSize('1mb'),
        doc:
          'largest bot input (`$execute` body, `executeBot` body), counted after `Content-Encoding` is undone ' +
          '(over it: 413 `too-costly` naming the limit; a larger declared `Content-Length`: before the body is read)',
      },
      {
        env: 'BOT_HL7_MAX_BYTES',
        key: 'botHl7MaxBytes',
        read: int(4 * 1024 * 1024),
        doc:
          'largest `x-application/hl7-v2+er7` body a bot accepts (4 MiB; over it: 413 `too-costly` naming the ' +
          'limit, answered before the body is read)',
      },
      {
        env: 'BOT_MAX_EXECUTIONS_PER_REQUEST',
        key: 'botMaxExecutionsPerRequest',
        read: int(50),
        doc: 'bot executions one incoming request may cause, bots calling bots included (over it: 429 `too-costly`)',
      },
      {
        env: 'BOT_HOST_CALLS_PER_EXECUTION',
        key: 'botHostCallsPerExecution',
        read: int(1000),
        doc: '`medplum.*` and `fetch` calls one bot execution may make (over it: the call throws inside the bot)',
      },
      {
        env: 'BOT_HOST_BYTES_PER_EXECUTION',
        key: 'botHostBytesPerExecution',
        read: byteSize('64mb'),
        doc:
          'bytes of JSON one bot execution may move through `medplum.*` and `fetch`, arguments (counted as they ' +
          'arrive, before they are parsed) and results together (over it: the call throws inside the bot)',
      },
      {
        env: 'BOT_PROJECT_HOST_CALLS',
        key: 'botProjectHostCalls',
        read: int(32),
        doc: "`medplum.*` and `fetch` calls of one project's bot executions running at once (more wait their turn)",
      },
      {
        env: 'BOT_PROJECT_WRITES_PER_SECOND',
        key: 'botProjectWritesPerSecond',
        read: int(20, { atLeast: 1 }),
        doc:
          "resources one project's bots may create, update or delete per second, in bursts of as many; a write " +
          'waits up to 1 s for its turn, beyond that it throws inside the bot',
      },
      {
        env: 'BOT_JOBS_QUEUED_PER_PROJECT',
        key: 'botJobsQueuedPerProject',
        read: int(1000),
        doc: 'asynchronous bot jobs one project may have queued (over it: 429 `throttled`, `Retry-After: 5`)',
      },
    ],
  },
  {
    title: 'GraphQL',
    about:
      'Budgets of a document sent to `/graphql`, checked before any resolver runs (over one: 400 naming the ' +
      'setting), and introspection.',
    settings: [
      {
        env: 'GRAPHQL_BODY_LIMIT',
        key: 'graphql.bodyLimit',
        read: size('256kb'),
        doc: 'largest `/graphql` request body (413 above it; use the REST API for large resources)',
      },
      {
        env: 'GRAPHQL_MAX_TOKENS',
        key: 'graphql.maxTokens',
        read: int(2000),
        doc: 'tokens in a `/graphql` document (parsing stops at the limit)',
      },
      {
        env: 'GRAPHQL_MAX_DEPTH',
        key: 'graphql.maxDepth',
        read: int(10),
        doc: 'selection depth of a `/graphql` operation',
      },
      {
        env: 'GRAPHQL_MAX_ALIASES',
        key: 'graphql.maxAliases',
        read: int(15),
        doc: 'aliases in a `/graphql` operation',
      },
      {
        env: 'GRAPHQL_MAX_DIRECTIVES',
        key: 'graphql.maxDirectives',
        read: int(20),
        doc: 'directives in a `/graphql` operation',
      },
      {
        env: 'GRAPHQL_MAX_COST',
        key: 'graphql.maxCost',
        read: int(5000),
        doc:
          'shape cost of a `/graphql` operation (graphql-armor cost-limit: objects 2, scalars 1, times 1.5 per ' +
          'level)',
      },
      {
        env: 'GRAPHQL_MAX_EXPENSIVE_FIELDS',
        key: 'graphql.maxExpensiveFields',
        read: int(4),
        doc: 'expensive fields per `/graphql` operation (see [Limits](graphql.md#limits))',
      },
      {
        env: 'GRAPHQL_INTROSPECTION',
        key: 'graphql.introspection',
        read: introspectionMode(
          (env: Env) => (env.NODE_ENV === 'production' ? 'signed-in' : 'all'),
          '`signed-in` when `NODE_ENV=production`, else `true`',
        ),
        doc:
          'who gets introspection and "Did you mean" suggestions on `/graphql`: `true` everyone, `signed-in` ' +
          'callers with a valid access token (GraphiQL after sign-in), `false` no one',
      },
    ],
  },
] as const satisfies readonly Topic[];
