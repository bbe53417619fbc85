import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { pageWindow } from '../../../shared/http/pagination.js';
import { reply } from '../../../shared/http/reply.js';
import { JsonDecimal } from '../../../shared/money/json.js';
import { MigratePlanBody, MigratePlanQuery, PlanMigrationSchema } from '../../../shared/api/plans.js';
import { applyPlanMigration, previewPlanMigration, type PlanMigration } from '../../domain/billing/plan-migration.js';
import { checkMigrationPriced } from '../../domain/plans/migration-books.js';
import { parsePlanMigration, type PlanMigrationRequest } from './input.js';

/**
 * POST /v1/plans/:plan_id/migrate?page&per_page — admin: move from_version's subscribers to to_version (docs/plans.md
 * "Moving subscribers"). dry_run: nothing changes; the count and a page of upcoming amounts before and after.
 * Otherwise every subscription still on from_version moves once (again: only those left), and the answer
 * counts those this request moved.
 */
export function migratePlanRoute(deps: ApiDeps): RouteDef<PlanMigrationRequest> {
  return {
    method: 'POST',
    path: '/v1/plans/:plan_id/migrate',
    auth: 'admin',
    input: parsePlanMigration,
    handler: async (ctx, q) => {
      const m: PlanMigration = { planId: ctx.params.plan_id!, from: q.from_version, to: q.to_version, at: q.at };
      const pagination = { page: q.page, per_page: q.per_page };
      await checkMigrationPriced(deps.pg, m.planId, m.from, m.to);
      if (!q.dry_run) {
        const moved = await applyPlanMigration(deps.pg, m);
        return reply.ok({ subscriptions: moved, preview: [], pagination: { ...pagination, total: 0 } });
      }
      const { total, preview } = await previewPlanMigration(
        { pg: deps.pg, clickhouse: deps.clickhouse, database: deps.config.CLICKHOUSE_DATABASE },
        m,
        pageWindow(q),
      );
      return reply.ok({
        subscriptions: total,
        preview: preview.map((p) => ({
          subscription_id: p.subscription_id,
          upcoming_amount_before: new JsonDecimal(p.before),
          upcoming_amount_after: new JsonDecimal(p.after),
        })),
        pagination: { ...pagination, total },
      });
    },
    doc: {
      summary: 'Move a plan version’s subscribers to another version (dry_run: preview the upcoming invoices)',
      tags: ['plans'],
      query: MigratePlanQuery,
      requestBody: MigratePlanBody,
      responses: {
        '200': {
          description: 'The subscriptions moved, or (dry run) to move and a page of previews',
          schema: PlanMigrationSchema,
        },
      },
    },
  };
}
