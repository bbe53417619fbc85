import t from 'tap';
import { stepsFor, type MatchedRoute } from '../../shared/http/pipeline.js';
import type { HttpReply, RequestContext } from '../../shared/http/context.js';
import type { RouteDef } from '../../shared/http/route.js';
import type { Infra } from '../../shared/infra.js';
import { apiPipeline } from '../../services/roles/api/pipeline.js';

// A route's chain (stepsFor) leaves out only steps that would pass each of its requests straight on: the chain
// answers like the full list, with fewer calls on the ingest hot path. The api's own steps, in its order (none
// of the services behind them is reached: a left-out step must not touch them).
const infra = {
  log: {},
  pg: {},
  config: { SECRET_KEY: 'pipeline-steps-test-secret-key-32-bytes!' },
} as unknown as Infra;
const steps = apiPipeline(infra, {} as never, {} as never, { clearAll: () => undefined } as never);

const handler = (): HttpReply => ({ status: 202 });
const route = (def: Partial<RouteDef>): MatchedRoute => ({
  def: { method: 'POST', path: '/x', auth: 'write', handler, ...def } as RouteDef,
  pattern: '/x',
});
const names = (r: MatchedRoute) => stepsFor(steps, r).map((s) => s.name);

t.test('ingest (rated by records, not idempotent, no input parser): five steps', async (t) => {
  const ingest = route({ rateLimit: 'records', idempotent: false });
  t.same(names(ingest), ['problems', 'authenticate', 'role', 'nul-in-url', 'body']);
  // Each step left out passes a request of that route on, returning what comes after it.
  const answer: HttpReply = { status: 202 };
  const ctx = { method: 'POST', principal: { accountId: 'acct_a' } } as unknown as RequestContext;
  for (const s of steps.filter((s) => !stepsFor(steps, ingest).includes(s))) {
    let called = 0;
    const out = s.run(ctx, ingest, () => {
      called++;
      return answer;
    });
    t.equal(out, answer, `${s.name} returns the answer after it`);
    t.equal(called, 1, `${s.name} passes the request on once`);
  }
});

t.test('an authenticated write with an input parser: every step', async (t) => {
  t.same(
    names(route({ input: () => ({}) })),
    steps.map((s) => s.name),
  );
});

t.test('a public read: no authentication, audit, cache clearing or idempotency', async (t) => {
  t.same(names(route({ method: 'GET', auth: 'public' })), ['problems', 'role', 'rate-limit', 'nul-in-url', 'body']);
});
