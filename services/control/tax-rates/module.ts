import type { ApiDeps, RouteDef, RouteModuleFactory } from '../../../shared/http/route.js';
import { pageWindow } from '../../../shared/http/pagination.js';
import { reply } from '../../../shared/http/reply.js';
import { okFromCache } from '../../../shared/http/cached-reply.js';
import { CreateTaxRateBody, ListTaxRatesQuery, TaxRateListSchema, TaxRateSchema } from '../../../shared/api/tax.js';
import type { NewTaxRate } from '../../domain/tax/types.js';
import { archiveTaxRate, getTaxRate, insertTaxRate, listTaxRates } from '../../domain/tax/store.js';
import { parseListTaxRates, parseNewTaxRate, type TaxRateListRequest } from './input.js';
import { toTaxRate } from './representation.js';

/** POST /v1/tax_rates — admin: the deployment's rates (docs/billing.md "Tax"). */
function createTaxRateRoute(deps: ApiDeps): RouteDef<NewTaxRate> {
  return {
    method: 'POST',
    path: '/v1/tax_rates',
    auth: 'admin',
    input: parseNewTaxRate,
    handler: async (_ctx, rate) => {
      const row = await insertTaxRate(deps.pg, rate);
      return reply.created(toTaxRate(row), `/v1/tax_rates/${row.id}`);
    },
    doc: {
      summary: 'Create a tax rate',
      tags: ['tax'],
      requestBody: CreateTaxRateBody,
      responses: { '201': { description: 'The tax rate (Location names it)', schema: TaxRateSchema } },
    },
  };
}

function listTaxRatesRoute(deps: ApiDeps): RouteDef<TaxRateListRequest> {
  return {
    method: 'GET',
    path: '/v1/tax_rates',
    auth: 'admin',
    input: parseListTaxRates,
    handler: async (_ctx, q) => {
      const { rows, total } = await listTaxRates(deps.pg, { archived: q.archived }, pageWindow(q));
      return reply.page(rows.map(toTaxRate), q, total);
    },
    doc: {
      summary: 'List tax rates (newest first; archived ones with ?archived=true)',
      tags: ['tax'],
      query: ListTaxRatesQuery,
      responses: { '200': { description: 'A page of tax rates', schema: TaxRateListSchema } },
    },
  };
}

function getTaxRateRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/tax_rates/:tax_rate_id',
    auth: 'admin',
    handler: (ctx) => {
      const id = ctx.params.tax_rate_id!;
      return okFromCache(deps.reads.of('tax_rates'), id, async () => toTaxRate(await getTaxRate(deps.pg, id)));
    },
    doc: {
      summary: 'Get a tax rate',
      tags: ['tax'],
      responses: { '200': { description: 'The tax rate', schema: TaxRateSchema } },
    },
  };
}

/** Archive (not delete: invoices name the rates they were taxed at); again: the same answer. */
function archiveTaxRateRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'POST',
    path: '/v1/tax_rates/:tax_rate_id/archive',
    auth: 'admin',
    handler: async (ctx) => reply.ok(toTaxRate(await archiveTaxRate(deps.pg, ctx.params.tax_rate_id!))),
    doc: {
      summary: 'Archive a tax rate: new invoices are no longer taxed at it',
      tags: ['tax'],
      responses: { '200': { description: 'The archived tax rate', schema: TaxRateSchema } },
    },
  };
}

/** /v1/tax_rates: the deployment's tax rates, admin only (read and write). */
export const taxRatesModule: RouteModuleFactory = (deps) => ({
  name: 'tax-rates',
  area: 'control',
  register(server) {
    for (const route of [listTaxRatesRoute, getTaxRateRoute, createTaxRateRoute, archiveTaxRateRoute])
      server.route(route(deps));
  },
});
