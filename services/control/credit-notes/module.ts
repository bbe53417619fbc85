import type { RouteModuleFactory } from '../../../shared/http/route.js';
import { createCreditNotePdfPool } from '../../workers/pool.js';
import { createPaymentProcessor } from '../../domain/payments/create.js';
import { createCreditNoteRoute } from './create.js';
import { listCreditNotesRoute } from './list.js';
import { getCreditNoteRoute } from './get.js';
import { downloadCreditNoteRoute, type CreditNotePdfPool } from './download.js';

/**
 * Credit notes: operators issue them on an invoice (/v1/billing/invoices/{id}/credit-notes), accounts read theirs
 * (/v1/billing/credit-notes). The PDF worker pool starts on the first download.
 */
export const creditNotesModule: RouteModuleFactory = (deps) => {
  let pool: CreditNotePdfPool | undefined;
  return {
    name: 'credit-notes',
    area: 'control',
    register(server) {
      server.route(createCreditNoteRoute(deps, createPaymentProcessor(deps.pg, deps.config)));
      server.route(listCreditNotesRoute(deps));
      server.route(getCreditNoteRoute(deps));
      server.route(downloadCreditNoteRoute(deps, () => (pool ??= createCreditNotePdfPool())));
    },
    async stop() {
      const p = pool;
      pool = undefined;
      await p?.destroy();
    },
  };
};
