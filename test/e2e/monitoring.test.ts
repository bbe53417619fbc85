import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { repoPath } from '../../shared/paths.js';
import { ROLES } from '../../services/roles.js';
import { TOOLS, toolPath } from '../../infra/stack/tools.js';
import {
  parseExposition,
  renderMetricsTable,
  sampleNames,
  tableOf,
  withTable,
  type ExposedMetric,
} from '../../infra/monitoring/metrics-doc.js';
import { metricNames } from '../../infra/monitoring/promql.js';
import { DEFAULT_HOST_PORTS, parseInventory } from '../../infra/stack/inventory.js';
import { isolatedConfig, testInfra, waitUntil } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson, usageRecord, waitForIngressMeter } from '../fixtures/matrix.js';
import { startRoleProcess } from '../fixtures/role-process.js';

// The on-call's kit (docs/metrics.md): alert rules checked and unit-tested with Debian's promtool, the metrics
// table generated from what every role really exports, and a Grafana dashboard whose queries all name a metric
// some role exports — checked against live role processes, so none of the three can drift from the code.

const MONITORING = repoPath('infra/monitoring');
const ALERTS = path.join(MONITORING, 'alerts.yml');
const DOC = repoPath('docs/metrics.md');

/** What the issue asks an on-call to be woken for, and the alert that does it. */
const REQUIRED_ALERTS: Record<string, string> = {
  'ingest 5xx': 'MeterlineIngest5xx',
  'JetStream lag': 'MeterlineJetStreamLag',
  'consumer redeliveries': 'MeterlineConsumerRedeliveries',
  'ClickHouse insert errors': 'MeterlineClickHouseInsertErrors',
  'webhook failure rate': 'MeterlineWebhookFailureRate',
  'billing run failures': 'MeterlineBillingRunFailures',
  'revocation watch stale': 'MeterlineRevocationWatchStale',
};

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
}
interface AlertTest {
  alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[];
}

const rules = (parseYaml(readFileSync(ALERTS, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap(
  (g) => g.rules,
);

function promtool(bin: string, args: string[], cwd = MONITORING) {
  const r = spawnSync(bin, args, { cwd, encoding: 'utf8' });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

t.test('alert rules: promtool check rules and promtool test rules', async (t) => {
  const bin = await toolPath(TOOLS.promtool);
  const check = promtool(bin, ['check', 'rules', ALERTS]);
  t.equal(check.status, 0, `promtool check rules passes:\n${check.out}`);
  t.match(check.out, new RegExp(`SUCCESS: ${rules.length} rules found`));

  const alerts = rules.map((r) => r.alert).filter(Boolean);
  for (const [what, name] of Object.entries(REQUIRED_ALERTS)) t.ok(alerts.includes(name), `${what}: ${name}`);

  // Every alert has a unit test in which it fires (a test that only expects silence proves little).
  const tests = (parseYaml(readFileSync(path.join(MONITORING, 'alerts.test.yml'), 'utf8')) as { tests: AlertTest[] })
    .tests;
  const firing = new Set(
    tests.flatMap((x) => (x.alert_rule_test ?? []).filter((a) => a.exp_alerts.length > 0).map((a) => a.alertname)),
  );
  t.same(
    alerts.filter((a) => !firing.has(a!)),
    [],
    'every alert has a promtool test case in which it fires',
  );
  const run = promtool(bin, ['test', 'rules', 'alerts.test.yml']);
  t.equal(run.status, 0, `promtool test rules passes:\n${run.out}`);

  // The scrape configuration of the three-host layout: valid, and aimed at every role of every host of the
  // example inventory on the ports the hosts use.
  const config = promtool(bin, ['check', 'config', path.join(MONITORING, 'prometheus.yml')]);
  t.equal(config.status, 0, `promtool check config passes:\n${config.out}`);
  const example = repoPath('infra/hosts/inventory.example.json');
  const inv = parseInventory(JSON.parse(readFileSync(example, 'utf8')), example);
  const scrape = parseYaml(readFileSync(path.join(MONITORING, 'prometheus.yml'), 'utf8')) as {
    scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[];
  };
  for (const role of ROLES) {
    const port = role === 'api' ? DEFAULT_HOST_PORTS.api : DEFAULT_HOST_PORTS[`${role}_metrics`];
    const job = scrape.scrape_configs.find((j) => j.job_name === `meterline-${role}`);
    t.same(
      job?.static_configs.flatMap((c) => c.targets),
      inv.hosts.filter((h) => h.roles.includes(role)).map((h) => `${h.address}:${port}`),
      `prometheus.yml scrapes ${role} on every host`,
    );
  }

  // The tests do bite: the same tests against a rule with a tenfold threshold fail.
  const dir = mkdtempSync(path.join(tmpdir(), 'meterline-alerts-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(path.join(dir, 'alerts.yml'), readFileSync(ALERTS, 'utf8').replace('> 0.05', '> 0.5'));
  writeFileSync(path.join(dir, 'alerts.test.yml'), readFileSync(path.join(MONITORING, 'alerts.test.yml')));
  const loosened = promtool(bin, ['test', 'rules', 'alerts.test.yml'], dir);
  t.not(loosened.status, 0, 'a loosened ingest threshold fails the unit tests');
  t.match(loosened.out, /MeterlineIngest5xx/);
});

t.test('every role /metrics: the documented table, alert rules and dashboard queries name live metrics', async (t) => {
  const config = await isolatedConfig(t);
  const processes = await Promise.all(ROLES.map((role) => startRoleProcess(t, role, config)));
  const byRole: Record<string, ExposedMetric[]> = {};
  // One usage record through the api and the consumer, so the labelled series the alerts select exist.
  const api = processes.find((p) => p.role === 'api')!;
  const base = api.metricsUrl.replace(/\/metrics$/, '');
  const account = await createTestAccount(await testInfra(t, config));
  const meter = await callJson(base, account.tokens.write, 'POST', '/v1/meters', {
    name: 'calls',
    unit: 'call',
    aggregation: 'sum',
  });
  await waitForIngressMeter(base, account.tokens.write, meter.body.id as string);
  const posted = await callJson(base, account.tokens.write, 'POST', `/v1/meters/${meter.body.id}/usage`, usageRecord());
  t.equal(posted.status, 202);
  const consumer = processes.find((p) => p.role === 'consumer')!;
  await waitUntil(
    async () =>
      /^meterline_usage_consumer_messages_total\{[^}]*outcome="inserted"/m.test(
        await (await fetch(consumer.metricsUrl)).text(),
      ),
    'the consumer to insert the record',
    30_000,
    200,
  );
  const apiText = await (await fetch(api.metricsUrl)).text();
  t.match(
    apiText,
    /^meterline_http_requests_total\{route="\/v1\/meters\/:meter_id\/usage",method="POST",status="202",role="api"\} 1$/m,
    'ingest is counted with the labels MeterlineIngest5xx selects (role, method, route, status)',
  );
  for (const p of processes) {
    // The JetStream lag gauges are present once the role's durable consumer exists (made at its start).
    await waitUntil(
      async () => {
        const text = await (await fetch(p.metricsUrl)).text();
        byRole[p.role] = parseExposition(text);
        return (
          !['consumer', 'dispatcher'].includes(p.role) || /^meterline_jetstream_consumer_pending_messages\{/m.test(text)
        );
      },
      `${p.role} /metrics with its JetStream lag`,
      30_000,
      200,
    );
    t.ok(
      byRole[p.role]!.some((m) => m.name === 'meterline_build_info'),
      `${p.role} serves /metrics (${byRole[p.role]!.length} metrics)`,
    );
  }
  for (const [role, metrics] of Object.entries(byRole)) {
    const undocumented = metrics.filter((m) => !m.help.trim()).map((m) => m.name);
    t.same(undocumented, [], `every metric of ${role} says what it means`);
  }

  const table = renderMetricsTable(byRole);
  const doc = readFileSync(DOC, 'utf8');
  if (process.env.UPDATE_DOCS) writeFileSync(DOC, withTable(doc, table));
  t.equal(
    tableOf(readFileSync(DOC, 'utf8')),
    table,
    'docs/metrics.md lists exactly the metrics the roles export (UPDATE_DOCS=1 node dist/test/run.js monitoring rewrites it)',
  );

  const live = new Set(Object.values(byRole).flatMap((ms) => ms.flatMap(sampleNames)));
  // `up` is the one series Prometheus makes itself (a scrape's success), not a role.
  const missing = (expr: string) => metricNames(expr).filter((n) => !live.has(n) && n !== 'up');
  for (const r of rules) t.same(missing(r.expr), [], `alert ${r.alert}: every metric it reads is exported`);

  const dashboard = JSON.parse(readFileSync(path.join(MONITORING, 'grafana-dashboard.json'), 'utf8')) as {
    panels: { title: string; type: string; targets?: { expr: string }[] }[];
  };
  const queries = dashboard.panels.flatMap((p) => (p.targets ?? []).map((q) => ({ panel: p.title, expr: q.expr })));
  t.ok(queries.length >= 20, `${queries.length} dashboard queries`);
  for (const q of queries) {
    t.ok(metricNames(q.expr).length > 0, `"${q.panel}" reads a metric`);
    t.same(missing(q.expr), [], `"${q.panel}": every metric it reads is exported`);
  }
  // And each one is valid PromQL: promtool checks them as recording rules (Grafana's $__rate_interval → 5m).
  const bin = await toolPath(TOOLS.promtool);
  const dir = mkdtempSync(path.join(tmpdir(), 'meterline-dashboard-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const asRules = {
    groups: [
      {
        name: 'dashboard',
        rules: queries.map((q, i) => ({
          record: `dashboard:query_${i}`,
          expr: q.expr.replace(/\$__rate_interval/g, '5m'),
        })),
      },
    ],
  };
  writeFileSync(path.join(dir, 'dashboard.rules.json'), JSON.stringify(asRules));
  const check = promtool(bin, ['check', 'rules', path.join(dir, 'dashboard.rules.json')], dir);
  t.equal(check.status, 0, `every dashboard query parses:\n${check.out}`);
});
