import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { CreditNoteSchema } from '../../../shared/api/credit-notes.js';
import { toCreditNote } from './representation.js';
import { getCreditNote } from '../../domain/credit-notes/store.js';
import { accountActingOn } from '../../domain/customers/acting-for.js';

/** GET /v1/billing/credit-notes/:credit_note_id — 404 for another account's note. */
export function getCreditNoteRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/billing/credit-notes/:credit_note_id',
    auth: 'read',
    handler: async (ctx) => {
      const id = ctx.params.credit_note_id!;
      const accountId = await accountActingOn(deps.pg, ctx.principal!, 'credit_note', id);
      return reply.ok(toCreditNote(await getCreditNote(deps.pg, accountId, id)));
    },
    doc: {
      summary: 'Get a credit note with its lines and refund',
      tags: ['billing'],
      responses: { '200': { description: 'The credit note', schema: CreditNoteSchema } },
    },
  };
}
