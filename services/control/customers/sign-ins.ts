import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { pageWindow, PaginationQuery, type PageRequest } from '../../../shared/http/pagination.js';
import { queryValidator } from '../../../shared/http/validation.js';
import { reply } from '../../../shared/http/reply.js';
import Type from 'typebox';
import { CreateSignInBody, SignInListSchema, SignInSchema } from '../../../shared/api/customers.js';
import type { NewSignIn } from '../../domain/customers/types.js';
import { toSignIn } from './representation.js';
import { parseNewSignIn } from './input.js';
import { addSignIn, listSignIns } from '../../domain/customers/sign-ins-store.js';

const ListQuery = Type.Object({ ...PaginationQuery }, { additionalProperties: false });
const listQuery = queryValidator<PageRequest>(ListQuery);

/**
 * POST /v1/customers/:customer_id/users (admin) — a sign-in for one of the customer's people: they sign in on the
 * OAuth pages (the console, OAuth apps) and act for that customer's account only.
 */
export function createSignInRoute(deps: ApiDeps): RouteDef<NewSignIn> {
  return {
    method: 'POST',
    path: '/v1/customers/:customer_id/users',
    auth: 'admin',
    input: parseNewSignIn,
    handler: async (ctx, signIn) => {
      const { row, generatedPassword } = await addSignIn(deps.pg, ctx.params.customer_id!, signIn);
      return reply.created(toSignIn(row, generatedPassword), `/v1/customers/${row.customer_id}/users`);
    },
    doc: {
      summary:
        'Give one of a customer’s people a sign-in (a user of its account; a password is generated and shown once when omitted)',
      tags: ['customers'],
      requestBody: CreateSignInBody,
      responses: { '201': { description: 'The user', schema: SignInSchema } },
    },
  };
}

/** GET /v1/customers/:customer_id/users (admin) */
export function listSignInsRoute(deps: ApiDeps): RouteDef<PageRequest> {
  return {
    method: 'GET',
    path: '/v1/customers/:customer_id/users',
    auth: 'admin',
    input: (ctx) => listQuery.parseQuery(ctx.query),
    handler: async (ctx, page) => {
      const { rows, total } = await listSignIns(deps.pg, ctx.params.customer_id!, pageWindow(page));
      return reply.page(
        rows.map((r) => toSignIn(r)),
        page,
        total,
      );
    },
    doc: {
      summary: 'List the sign-ins (users) of a customer, newest first',
      tags: ['customers'],
      query: ListQuery,
      responses: { '200': { description: 'A page of users', schema: SignInListSchema } },
    },
  };
}
