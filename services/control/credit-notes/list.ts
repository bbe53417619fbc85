import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { pageWindow } from '../../../shared/http/pagination.js';
import { reply } from '../../../shared/http/reply.js';
import { CreditNoteListSchema, ListCreditNotesQuery } from '../../../shared/api/credit-notes.js';
import { toCreditNote } from './representation.js';
import { parseListCreditNotes } from './input.js';
import { listCreditNotes } from '../../domain/credit-notes/store.js';
import { accountActedFor, accountActingOn } from '../../domain/customers/acting-for.js';

/**
 * GET /v1/billing/credit-notes?page&per_page&invoice_id&customer_id — the caller's credit notes, newest first; an
 * operator's: the named customer's, or the named invoice's customer's.
 */
export function listCreditNotesRoute(deps: ApiDeps): RouteDef<ListCreditNotesQuery> {
  return {
    method: 'GET',
    path: '/v1/billing/credit-notes',
    auth: 'read',
    input: parseListCreditNotes,
    handler: async (ctx, q) => {
      const principal = ctx.principal!;
      const accountId =
        q.customer_id === undefined && q.invoice_id !== undefined
          ? await accountActingOn(deps.pg, principal, 'invoice', q.invoice_id)
          : await accountActedFor(deps.pg, principal, q.customer_id);
      const { items, total } = await listCreditNotes(deps.pg, accountId, q, pageWindow(q));
      return reply.page(items.map(toCreditNote), q, total);
    },
    doc: {
      summary: 'List credit notes (newest first), optionally of one invoice',
      tags: ['billing'],
      query: ListCreditNotesQuery,
      responses: { '200': { description: 'A page of credit notes', schema: CreditNoteListSchema } },
    },
  };
}
