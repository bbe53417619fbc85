import type { ApiDeps, RouteDef, RouteModuleFactory } from '../../../shared/http/route.js';
import { pageWindow } from '../../../shared/http/pagination.js';
import { reply } from '../../../shared/http/reply.js';
import { okFromCache } from '../../../shared/http/cached-reply.js';
import { CouponListSchema, CouponSchema, CreateCouponBody, ListCouponsQuery } from '../../../shared/api/coupons.js';
import type { NewCoupon } from '../../domain/coupons/types.js';
import { getCoupon, insertCoupon, listCoupons } from '../../domain/coupons/store.js';
import { parseListCoupons, parseNewCoupon } from './input.js';
import { toCoupon } from './representation.js';

/** POST /v1/coupons — admin: the deployment's coupons (docs/coupons.md). */
function createCouponRoute(deps: ApiDeps): RouteDef<NewCoupon> {
  return {
    method: 'POST',
    path: '/v1/coupons',
    auth: 'admin',
    input: (ctx) => parseNewCoupon(ctx),
    handler: async (_ctx, coupon) => {
      const row = await insertCoupon(deps.pg, coupon);
      return reply.created(toCoupon(row), `/v1/coupons/${row.id}`);
    },
    doc: {
      summary: 'Create a coupon',
      tags: ['coupons'],
      requestBody: CreateCouponBody,
      responses: { '201': { description: 'The coupon (Location names it)', schema: CouponSchema } },
    },
  };
}

/** Coupons are the operator's: a customer sees the one on its subscription through the subscription (`discount`). */
function listCouponsRoute(deps: ApiDeps): RouteDef<ListCouponsQuery> {
  return {
    method: 'GET',
    path: '/v1/coupons',
    auth: 'admin',
    input: parseListCoupons,
    handler: async (_ctx, q) => {
      const { rows, total } = await listCoupons(deps.pg, pageWindow(q));
      return reply.page(rows.map(toCoupon), q, total);
    },
    doc: {
      summary: 'List coupons (newest first)',
      tags: ['coupons'],
      query: ListCouponsQuery,
      responses: { '200': { description: 'A page of coupons', schema: CouponListSchema } },
    },
  };
}

function getCouponRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/coupons/:coupon_id',
    auth: 'admin',
    handler: (ctx) => {
      const id = ctx.params.coupon_id!;
      return okFromCache(deps.reads.of('coupons'), id, async () => toCoupon(await getCoupon(deps.pg, id)));
    },
    doc: {
      summary: 'Get a coupon',
      tags: ['coupons'],
      responses: { '200': { description: 'The coupon', schema: CouponSchema } },
    },
  };
}

/** /v1/coupons: the deployment's coupons, admin only (read and write). */
export const couponsModule: RouteModuleFactory = (deps) => ({
  name: 'coupons',
  area: 'control',
  register(server) {
    for (const route of [listCouponsRoute, getCouponRoute, createCouponRoute]) server.route(route(deps));
  },
});
