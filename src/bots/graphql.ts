// GraphQL for bots: executeBot (sync) and executeBotAsync (job), botJob, deployBot, botExecutions, and the
// admin-only project secrets (names listable, values never returned).
import { builder } from '../graphql/builder.js';
import { requireCaller, type GraphQLContext } from '../graphql/context.js';
import type { Caller } from '../core/caller.js';
import { badRequest, forbidden, notFound } from '../core/errors.js';
import { mediaType } from '../core/media-type.js';
import type { BotResult, ExecuteRequest } from './types.js';
import type { JobState } from './jobs.js';
import { executionHost } from './graphql-medplum.js';

/** Request headers a bot may see: everything but credentials. */
function botHeaders(ctx: GraphQLContext): Record<string, string> {
  const out: Record<string, string> = {};
  if (ctx.depth > 0) return out;
  for (const [k, v] of Object.entries(ctx.request.headers)) {
    if (v === undefined || k === 'authorization' || k === 'cookie' || k === 'proxy-authorization') continue;
    out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

interface ExecArgs {
  id?: string | null;
  identifier?: string | null;
  contentType?: string | null;
  body?: string | null;
  query?: unknown;
}

function executeRequest(ctx: GraphQLContext, args: ExecArgs): ExecuteRequest {
  let query: Record<string, string> | null = null;
  if (args.query !== undefined && args.query !== null) {
    if (typeof args.query !== 'object' || Array.isArray(args.query))
      throw badRequest('query must be an object');
    query = {};
    for (const [k, v] of Object.entries(args.query))
      query[k] = Array.isArray(v) ? v.map(String).join(',') : String(v);
  }
  return {
    id: args.id,
    identifier: args.identifier,
    contentType: query
      ? 'application/x-www-form-urlencoded'
      : mediaType(args.contentType ?? 'application/json'),
    body: args.body ?? '',
    query,
    headers: botHeaders(ctx),
  };
}

const BotResultRef = builder.objectRef<BotResult>('BotResult').implement({
  description: 'The HTTP-shaped response of a bot execution.',
  fields: (t) => ({
    status: t.exposeInt('status'),
    contentType: t.exposeString('contentType'),
    body: t.exposeString('body'),
    headers: t.field({ type: 'JSON', resolve: (r) => r.headers }),
    outcome: t.exposeString('outcome', {
      description: 'success | error | timeout | memory | output-too-large',
    }),
  }),
});

const BotJobRef = builder.objectRef<JobState>('BotJob').implement({
  description: 'An asynchronous bot execution (Prefer: respond-async).',
  fields: (t) => ({
    id: t.exposeID('id'),
    status: t.exposeString('status', { description: 'queued | running | completed | failed' }),
    responseStatus: t.exposeInt('responseStatus', { nullable: true }),
    responseType: t.exposeString('responseType', { nullable: true }),
    responseBody: t.exposeString('responseBody', { nullable: true }),
    responseHeaders: t.field({ type: 'JSON', nullable: true, resolve: (j) => j.responseHeaders }),
  }),
});

builder.prismaObject('BotExecution', {
  fields: (t) => ({
    id: t.exposeID('id'),
    botId: t.exposeString('botId'),
    requester: t.exposeString('requester', { nullable: true }),
    startedAt: t.expose('startedAt', { type: 'DateTime' }),
    durationMs: t.exposeInt('durationMs'),
    outcome: t.exposeString('outcome'),
    status: t.exposeInt('status'),
    message: t.exposeString('message', { nullable: true }),
    log: t.exposeString('log', { nullable: true }),
    contentType: t.exposeString('contentType', { nullable: true }),
    hostCalls: t.exposeInt('hostCalls', { description: '`medplum.*` and `fetch` calls the execution made' }),
    hostBytes: t.exposeInt('hostBytes', {
      description: 'Characters of JSON its host calls moved (BOT_HOST_BYTES_PER_EXECUTION)',
    }),
    hostRefused: t.exposeString('hostRefused', {
      nullable: true,
      description: 'The first host call a budget refused: its message, naming the setting',
    }),
  }),
});

const execArgs = (t: Parameters<Parameters<typeof builder.mutationField>[1]>[0]) => ({
  id: t.arg.string(),
  identifier: t.arg.string({ description: 'system|value, looked up in the caller project' }),
  contentType: t.arg.string({ description: 'Media type of body (default application/json)' }),
  body: t.arg.string(),
  query: t.arg({ type: 'JSON', description: 'Input as an object of parameters (the GET form)' }),
});

builder.mutationField('executeBot', (t) =>
  t.field({
    type: BotResultRef,
    args: execArgs(t),
    resolve: (_r, args, ctx) =>
      ctx.services.bots.execute(requireCaller(ctx), executeRequest(ctx, args), executionHost(ctx)),
  }),
);

builder.mutationField('executeBotAsync', (t) =>
  t.field({
    type: BotJobRef,
    description: 'Queues an execution; poll botJob(id) (or GET [base]/job/{id}).',
    args: execArgs(t),
    resolve: async (_r, args, ctx) => {
      const caller = requireCaller(ctx);
      const bots = ctx.services.bots;
      const req = executeRequest(ctx, args);
      const bot = await bots.resolve(caller, req);
      await bots.eventInput(req); // a bad body is refused now, not later in the job
      const id = await ctx.services.jobs.enqueue(caller, bot.id, bot.projectId, {
        ...req,
        id: bot.id,
        identifier: null,
      });
      return {
        id,
        status: 'queued',
        responseStatus: null,
        responseType: null,
        responseBody: null,
        responseHeaders: null,
      };
    },
  }),
);

builder.queryField('botJob', (t) =>
  t.field({
    type: BotJobRef,
    args: { id: t.arg.string({ required: true }) },
    resolve: async (_r, args, ctx) => {
      const caller = requireCaller(ctx);
      const job = await ctx.services.jobs.get(caller.projectId, args.id);
      if (!job) throw notFound(`Job ${args.id} not found`);
      return job;
    },
  }),
);

builder.mutationField('deployBot', (t) =>
  t.field({
    type: 'JSON',
    description: 'Replaces the code of a bot (compiled now; a compile error is a 400 naming the line).',
    args: { id: t.arg.string({ required: true }), code: t.arg.string({ required: true }) },
    resolve: (_r, args, ctx) => ctx.services.bots.store.deploy(requireCaller(ctx), args.id, args.code),
  }),
);

builder.queryField('botExecutions', (t) =>
  t.prismaField({
    type: ['BotExecution'],
    description:
      'Recent executions of a bot of the caller project, newest first (recorded within about a second).',
    args: { botId: t.arg.string({ required: true }), limit: t.arg.int() },
    resolve: async (query, _r, args, ctx) => {
      const caller = requireCaller(ctx);
      const limit = args.limit ?? 20;
      if (limit < 1 || limit > 1000) throw badRequest('limit must be between 1 and 1000', ['limit']);
      if (!/^[0-9a-f-]{36}$/i.test(args.botId)) throw notFound(`Bot/${args.botId} not found`);
      return ctx.services.db.prisma.botExecution.findMany({
        ...query,
        where: { botId: args.botId, projectId: caller.projectId },
        orderBy: { startedAt: 'desc' },
        take: limit,
      });
    },
  }),
);

function requireAdmin(ctx: GraphQLContext): Caller {
  const caller = requireCaller(ctx);
  if (!caller.admin) throw forbidden('Only a project admin can manage project secrets');
  return caller;
}

builder.mutationField('setProjectSecret', (t) =>
  t.boolean({
    description: 'Creates or replaces a secret bots of this project see in event.secrets (admin only).',
    args: { name: t.arg.string({ required: true }), value: t.arg.string({ required: true }) },
    resolve: async (_r, args, ctx) => {
      const p = requireAdmin(ctx);
      await ctx.services.bots.setSecret(p.projectId, args.name, args.value);
      return true;
    },
  }),
);

builder.mutationField('deleteProjectSecret', (t) =>
  t.boolean({
    description: 'Deletes a project secret (admin only); false when it did not exist.',
    args: { name: t.arg.string({ required: true }) },
    resolve: (_r, args, ctx) => ctx.services.bots.deleteSecret(requireAdmin(ctx).projectId, args.name),
  }),
);

builder.queryField('projectSecretNames', (t) =>
  t.stringList({
    description: 'Names of the project secrets (admin only; values are never returned).',
    resolve: async (_r, _a, ctx) => {
      const p = requireAdmin(ctx);
      const rows = await ctx.services.db.prisma.projectSecret.findMany({
        where: { projectId: p.projectId },
        select: { name: true },
        orderBy: { name: 'asc' },
      });
      return rows.map((r) => r.name);
    },
  }),
);
