import type { ApiDeps } from '../../../shared/http/route.js';
import type { PaymentProcessor } from '../../domain/payments/processor.js';
import { processorFor } from '../../domain/payments/create.js';
import { hostedKey } from '../../domain/hosted-pages/tokens.js';
import type { TopUpDeps } from '../../domain/billing/top-ups.js';

/** What createTopUp needs in the api process: the processor (the sandbox for a customer on a test clock). */
export function topUpDeps(deps: ApiDeps, processor: PaymentProcessor, clockId: string | null): TopUpDeps {
  return {
    pg: deps.pg,
    processor: processorFor(deps.pg, processor, clockId),
    log: deps.log,
    numberPrefix: deps.config.INVOICE_NUMBER_PREFIX,
    hostedLinks: { key: hostedKey(deps.config.SECRET_KEY), baseUrl: deps.config.PUBLIC_BASE_URL },
  };
}
