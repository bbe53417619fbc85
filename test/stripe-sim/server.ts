import { createHash } from 'node:crypto';
import http from 'node:http';
import { cardByNumber, shortcutNumber, type Decline } from './cards.js';
import { bool, obj, parseForm, str, type FormObject } from './form.js';
import * as make from './objects.js';
import { NO_FAULTS, SimState, newId, type Account, type StripeObject } from './state.js';
import { WebhookSender } from './webhooks.js';
import { CORS_HEADERS, STRIPE_JS, cardFramePage, challengePage, publishableRefusal, secretKeyOf } from './browser.js';

/**
 * A Stripe-compatible HTTP server for tests (docs/payments.md): the `stripe` package talks to it
 * exactly as to api.stripe.com (form-encoded requests, JSON responses, Stripe's error objects, Idempotency-Key
 * rules, signed webhooks). Each secret key is its own account. `/_sim/*` is its test-only control surface: the
 * webhook endpoint, fault injection, the 3-D Secure challenge's outcome, disputes.
 */

export interface SimOptions {
  host?: string;
  port: number;
  stateFile?: string | null;
  /** The endpoint every account sends webhooks to until it configures its own. */
  webhook?: { url: string; secret: string } | null;
}

class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
  ) {
    super(String(body.message));
  }
}

const invalid = (message: string, param?: string, code?: string) =>
  new ApiError(400, { type: 'invalid_request_error', message, ...(param ? { param } : {}), ...(code ? { code } : {}) });
const missing = (kind: string, id: string, param = 'id') =>
  new ApiError(404, {
    type: 'invalid_request_error',
    code: 'resource_missing',
    message: `No such ${kind}: '${id}'`,
    param,
  });
const required = (param: string) => invalid(`Missing required param: ${param}.`, param, 'parameter_missing');

interface Req {
  method: string;
  path: string;
  params: FormObject;
  account: Account;
  idempotencyKey: string | null;
  requestId: string;
}

type Handler = (r: Req, m: string[]) => { status?: number; body: unknown };

export function startStripeSim(o: SimOptions): Promise<http.Server> {
  const state = new SimState(o.stateFile ?? null, o.webhook ?? null);
  const sender = new WebhookSender();
  const base = () => `http://${o.host ?? '127.0.0.1'}:${(server.address() as { port: number }).port}`;

  const get = (a: Account, id: string, kind: string, param = 'id'): StripeObject => {
    const x = a.objects[id];
    if (!x || x.object !== kind) throw missing(kind, id, param);
    return x;
  };
  const put = (a: Account, x: StripeObject) => {
    a.objects[x.id] = x;
    return x;
  };
  const emit = (r: Pick<Req, 'account' | 'requestId' | 'idempotencyKey'>, type: string, x: StripeObject) => {
    const e = put(r.account, make.event(type, x, { id: r.requestId, idempotency_key: r.idempotencyKey }));
    r.account.events.push(e.id);
    sender.send(r.account, e);
  };
  const meta = (p: FormObject): Record<string, string> =>
    Object.fromEntries(Object.entries(obj(p.metadata) ?? {}).map(([k, v]) => [k, String(v)]));
  const amountOf = (v: unknown, param = 'amount'): number => {
    if (typeof v !== 'string' || !/^\d+$/.test(v)) throw invalid(`Invalid integer: ${String(v)}`, param);
    return Number(v);
  };

  /** A card payment method: from `pm_card_*` (a fresh one each time, as Stripe does), or an id of this account. */
  const resolvePm = (a: Account, id: string, param: string): StripeObject => {
    const number = shortcutNumber(id);
    if (number) {
      const pm = put(
        a,
        make.paymentMethod(cardByNumber(number)!, { month: 12, year: new Date().getUTCFullYear() + 3 }, {}),
      );
      a.cards[pm.id] = { number, setUp: false };
      return pm;
    }
    return get(a, id, 'payment_method', param);
  };
  const cardOf = (a: Account, pm: StripeObject) => cardByNumber(a.cards[pm.id]!.number)!;

  const cardError = (d: Decline, extra: Record<string, unknown>) =>
    new ApiError(402, { type: 'card_error', code: d.code, decline_code: d.decline_code, message: d.message, ...extra });

  const attach = (a: Account, pm: StripeObject, customerId: string) => {
    const d = cardOf(a, pm).attachDecline;
    if (d) throw cardError(d, { param: '', payment_method: pm });
    pm.customer = customerId;
  };

  /** Confirms a PaymentIntent with its payment method: succeeded, declined (402) or requires_action. */
  const confirmPayment = (r: Req, pi: StripeObject, offSession: boolean) => {
    const a = r.account;
    if (!pi.payment_method)
      throw invalid(
        "You cannot confirm this PaymentIntent because it's missing a payment method.",
        'payment_method',
        'payment_intent_unexpected_state',
      );
    if (!['requires_confirmation', 'requires_payment_method'].includes(pi.status as string))
      throw invalid(
        `This PaymentIntent's status is ${String(pi.status)}; it cannot be confirmed.`,
        undefined,
        'payment_intent_unexpected_state',
      );
    const pm = get(a, pi.payment_method as string, 'payment_method', 'payment_method');
    const card = cardOf(a, pm);
    const needs3ds = card.threeDS === 'always' || (card.threeDS === 'setup' && !(offSession && a.cards[pm.id]!.setUp));
    if (needs3ds) {
      pi.status = 'requires_action';
      pi.next_action = {
        type: 'redirect_to_url',
        redirect_to_url: { return_url: null, url: `${base()}/_sim/authenticate/${pi.id}` },
      };
      emit(r, 'payment_intent.requires_action', pi);
      return;
    }
    settlePayment(r, pi, pm);
  };

  const settlePayment = (
    r: Pick<Req, 'account' | 'requestId' | 'idempotencyKey'>,
    pi: StripeObject,
    pm: StripeObject,
  ) => {
    const a = r.account;
    const d = cardOf(a, pm).chargeDecline ?? null;
    const ch = put(a, make.charge(pi, pm, d));
    pi.latest_charge = ch.id;
    pi.next_action = null;
    if (d) {
      pi.status = 'requires_payment_method';
      pi.last_payment_error = {
        type: 'card_error',
        charge: ch.id,
        code: d.code,
        decline_code: d.decline_code,
        doc_url: `https://stripe.com/docs/error-codes/${d.code.replace(/_/g, '-')}`,
        message: d.message,
        payment_method: pm,
      };
      emit(r, 'charge.failed', ch);
      emit(r, 'payment_intent.payment_failed', pi);
      throw cardError(d, { charge: ch.id, payment_intent: pi, payment_method: pm });
    }
    pi.status = 'succeeded';
    pi.amount_received = pi.amount;
    pi.last_payment_error = null;
    emit(r, 'charge.succeeded', ch);
    emit(r, 'payment_intent.succeeded', pi);
  };

  const confirmSetup = (r: Req, si: StripeObject) => {
    const a = r.account;
    if (!si.payment_method) throw invalid('This SetupIntent has no payment method.', 'payment_method');
    const pm = get(a, si.payment_method as string, 'payment_method', 'payment_method');
    const card = cardOf(a, pm);
    if (card.attachDecline) {
      si.status = 'requires_payment_method';
      si.last_setup_error = {
        type: 'card_error',
        code: card.attachDecline.code,
        decline_code: card.attachDecline.decline_code,
        message: card.attachDecline.message,
        payment_method: pm,
      };
      emit(r, 'setup_intent.setup_failed', si);
      throw cardError(card.attachDecline, { setup_intent: si, payment_method: pm });
    }
    // A card authenticated once when set up is not challenged again when set up again.
    if (card.threeDS && !a.cards[pm.id]!.setUp) {
      si.status = 'requires_action';
      si.next_action = {
        type: 'redirect_to_url',
        redirect_to_url: { return_url: null, url: `${base()}/_sim/authenticate/${si.id}` },
      };
      emit(r, 'setup_intent.requires_action', si);
      return;
    }
    finishSetup(r, si, pm);
  };

  const finishSetup = (
    r: Pick<Req, 'account' | 'requestId' | 'idempotencyKey'>,
    si: StripeObject,
    pm: StripeObject,
  ) => {
    si.status = 'succeeded';
    si.next_action = null;
    si.last_setup_error = null;
    r.account.cards[pm.id]!.setUp = true;
    if (si.customer) pm.customer = si.customer;
    emit(r, 'setup_intent.succeeded', si);
  };

  const chargeOfRefund = (a: Account, p: FormObject): StripeObject => {
    const chId = str(p.charge);
    if (chId) return get(a, chId, 'charge', 'charge');
    const piId = str(p.payment_intent);
    if (!piId)
      throw invalid(
        'One of the following params should be provided for this request: payment_intent or charge.',
        'payment_intent',
      );
    const pi = get(a, piId, 'payment_intent', 'payment_intent');
    if (pi.status !== 'succeeded' || !pi.latest_charge)
      throw invalid(
        `This PaymentIntent (${piId}) does not have a successful charge to refund.`,
        'payment_intent',
        'charge_not_refundable',
      );
    return get(a, pi.latest_charge as string, 'charge');
  };

  const list = (items: StripeObject[], url: string, q: FormObject) => {
    const limit = Math.min(100, Number(str(q.limit) ?? 10));
    let from = 0;
    const after = str(q.starting_after);
    if (after) from = items.findIndex((x) => x.id === after) + 1;
    const data = items.slice(from, from + limit);
    return { object: 'list', data, has_more: from + limit < items.length, url };
  };
  const newestFirst = (a: Account, kind: string) =>
    Object.values(a.objects)
      .filter((x) => x.object === kind)
      .reverse();

  /** `metadata['k']:'v' AND status:'succeeded'` — the subset of Stripe's search language the adapter uses. */
  const search = (a: Account, kind: string, query: string) => {
    const clauses = query.split(/\s+AND\s+/i).map((c) => {
      const m = /^(?:metadata\[['"]([^'"]+)['"]\]|(\w+)):['"]([^'"]*)['"]$/.exec(c.trim());
      if (!m) throw invalid(`Invalid search query: ${query}`, 'query');
      return { metaKey: m[1], field: m[2], value: m[3]! };
    });
    return Object.values(a.objects).filter(
      (x) =>
        x.object === kind &&
        clauses.every((c) =>
          c.metaKey ? (x.metadata as Record<string, string>)[c.metaKey] === c.value : String(x[c.field!]) === c.value,
        ),
    );
  };

  const routes: [string, RegExp, Handler][] = [
    [
      'POST',
      /^\/v1\/customers$/,
      (r) => ({
        body: put(
          r.account,
          make.customer({
            email: str(r.params.email),
            name: str(r.params.name),
            description: str(r.params.description),
            metadata: meta(r.params),
          }),
        ),
      }),
    ],
    ['GET', /^\/v1\/customers\/([^/]+)$/, (r, m) => ({ body: get(r.account, m[1]!, 'customer') })],
    [
      'POST',
      /^\/v1\/customers\/([^/]+)$/,
      (r, m) => {
        const c = get(r.account, m[1]!, 'customer');
        const dpm = str(obj(r.params.invoice_settings)?.default_payment_method);
        if (dpm !== undefined) (c.invoice_settings as Record<string, unknown>).default_payment_method = dpm || null;
        if (r.params.metadata) c.metadata = { ...(c.metadata as object), ...meta(r.params) };
        for (const k of ['email', 'name', 'description']) if (str(r.params[k]) !== undefined) c[k] = str(r.params[k]);
        return { body: c };
      },
    ],
    [
      'POST',
      /^\/v1\/payment_methods$/,
      (r) => {
        if (str(r.params.type) !== 'card') throw required('type');
        const c = obj(r.params.card);
        if (!c) throw required('card');
        const number = str(c.token) ? shortcutNumber(str(c.token)!) : str(c.number)?.replace(/\s/g, '');
        if (!number) throw invalid('Invalid card token or number.', 'card[number]', 'invalid_number');
        const card = cardByNumber(number);
        if (!card)
          throw new ApiError(402, {
            type: 'card_error',
            code: 'incorrect_number',
            message: 'Your card number is incorrect.',
            param: 'card[number]',
          });
        const y = Number(str(c.exp_year) ?? new Date().getUTCFullYear() + 3);
        const pm = put(
          r.account,
          make.paymentMethod(
            card,
            { month: Number(str(c.exp_month) ?? 12), year: y < 100 ? 2000 + y : y },
            meta(r.params),
          ),
        );
        r.account.cards[pm.id] = { number, setUp: false };
        return { body: pm };
      },
    ],
    ['GET', /^\/v1\/payment_methods\/([^/]+)$/, (r, m) => ({ body: resolvePm(r.account, m[1]!, 'payment_method') })],
    [
      'POST',
      /^\/v1\/payment_methods\/([^/]+)\/attach$/,
      (r, m) => {
        const customerId = str(r.params.customer);
        if (!customerId) throw required('customer');
        get(r.account, customerId, 'customer', 'customer');
        const pm = resolvePm(r.account, m[1]!, 'payment_method');
        attach(r.account, pm, customerId);
        emit(r, 'payment_method.attached', pm);
        return { body: pm };
      },
    ],
    [
      'POST',
      /^\/v1\/setup_intents$/,
      (r) => {
        const customerId = str(r.params.customer) ?? null;
        if (customerId) get(r.account, customerId, 'customer', 'customer');
        const pmId = str(r.params.payment_method);
        const pm = pmId ? resolvePm(r.account, pmId, 'payment_method') : null;
        const si = put(
          r.account,
          make.setupIntent({
            customer: customerId,
            payment_method: pm?.id ?? null,
            metadata: meta(r.params),
            usage: str(r.params.usage) ?? 'off_session',
          }),
        );
        if (bool(r.params.confirm)) confirmSetup(r, si);
        return { body: si };
      },
    ],
    ['GET', /^\/v1\/setup_intents\/([^/]+)$/, (r, m) => ({ body: get(r.account, m[1]!, 'setup_intent') })],
    [
      'POST',
      /^\/v1\/setup_intents\/([^/]+)\/confirm$/,
      (r, m) => {
        const si = get(r.account, m[1]!, 'setup_intent');
        const pmId = str(r.params.payment_method);
        if (pmId) si.payment_method = resolvePm(r.account, pmId, 'payment_method').id;
        confirmSetup(r, si);
        return { body: si };
      },
    ],
    [
      'POST',
      /^\/v1\/payment_intents$/,
      (r) => {
        if (r.params.amount === undefined) throw required('amount');
        const amount = amountOf(r.params.amount);
        if (amount < 1)
          throw invalid('Amount must be at least 1 (in the smallest currency unit).', 'amount', 'amount_too_small');
        const currency = str(r.params.currency);
        if (!currency) throw required('currency');
        if (!/^[a-z]{3}$/.test(currency)) throw invalid(`Invalid currency: ${currency}.`, 'currency');
        const customerId = str(r.params.customer) ?? null;
        if (customerId) get(r.account, customerId, 'customer', 'customer');
        const pmId = str(r.params.payment_method);
        const pm = pmId ? resolvePm(r.account, pmId, 'payment_method') : null;
        if (pm && customerId && pm.customer !== customerId)
          throw invalid(
            `The provided PaymentMethod ${pm.id} is not attached to customer ${customerId}.`,
            'payment_method',
          );
        const pi = put(
          r.account,
          make.paymentIntent({
            amount,
            currency,
            customer: customerId,
            payment_method: pm?.id ?? null,
            description: str(r.params.description) ?? null,
            metadata: meta(r.params),
          }),
        );
        emit(r, 'payment_intent.created', pi);
        if (bool(r.params.confirm)) confirmPayment(r, pi, bool(r.params.off_session));
        return { body: pi };
      },
    ],
    [
      'GET',
      /^\/v1\/payment_intents\/search$/,
      (r) => {
        const q = str(r.params.query);
        if (!q) throw required('query');
        const found = search(r.account, 'payment_intent', q);
        return {
          body: {
            object: 'search_result',
            data: found,
            has_more: false,
            next_page: null,
            url: '/v1/payment_intents/search',
          },
        };
      },
    ],
    ['GET', /^\/v1\/payment_intents\/([^/]+)$/, (r, m) => ({ body: get(r.account, m[1]!, 'payment_intent') })],
    [
      'POST',
      /^\/v1\/payment_intents\/([^/]+)\/confirm$/,
      (r, m) => {
        const pi = get(r.account, m[1]!, 'payment_intent');
        const pmId = str(r.params.payment_method);
        if (pmId) pi.payment_method = resolvePm(r.account, pmId, 'payment_method').id;
        confirmPayment(r, pi, bool(r.params.off_session));
        return { body: pi };
      },
    ],
    ['GET', /^\/v1\/charges\/([^/]+)$/, (r, m) => ({ body: get(r.account, m[1]!, 'charge') })],
    [
      'POST',
      /^\/v1\/refunds$/,
      (r) => {
        const ch = chargeOfRefund(r.account, r.params);
        const left = (ch.amount as number) - (ch.amount_refunded as number);
        const amount = r.params.amount === undefined ? left : amountOf(r.params.amount);
        if (left === 0)
          throw invalid(`Charge ${ch.id} has already been refunded.`, undefined, 'charge_already_refunded');
        if (ch.disputed)
          throw invalid(`Charge ${ch.id} has been charged back; cannot issue a refund.`, undefined, 'charge_disputed');
        if (amount < 1 || amount > left)
          throw invalid(
            `Refund amount (${amount}) is greater than unrefunded amount on charge (${left}).`,
            'amount',
            'amount_too_large',
          );
        const re = put(r.account, make.refund(ch, amount, meta(r.params), str(r.params.reason) ?? null));
        ch.amount_refunded = (ch.amount_refunded as number) + amount;
        ch.refunded = ch.amount_refunded === ch.amount;
        emit(r, 'refund.created', re);
        emit(r, 'charge.refunded', ch);
        return { body: re };
      },
    ],
    ['GET', /^\/v1\/refunds\/([^/]+)$/, (r, m) => ({ body: get(r.account, m[1]!, 'refund') })],
    ['GET', /^\/v1\/disputes$/, (r) => ({ body: list(newestFirst(r.account, 'dispute'), '/v1/disputes', r.params) })],
    ['GET', /^\/v1\/disputes\/([^/]+)$/, (r, m) => ({ body: get(r.account, m[1]!, 'dispute') })],
    [
      'POST',
      /^\/v1\/disputes\/([^/]+)\/close$/,
      (r, m) => ({ body: closeDispute(r, get(r.account, m[1]!, 'dispute'), 'lost') }),
    ],
    [
      'GET',
      /^\/v1\/events$/,
      (r) => {
        const type = str(r.params.type);
        const all = r.account.events.map((id) => r.account.objects[id]!).reverse();
        return { body: list(type ? all.filter((e) => e.type === type) : all, '/v1/events', r.params) };
      },
    ],
    ['GET', /^\/v1\/events\/([^/]+)$/, (r, m) => ({ body: get(r.account, m[1]!, 'event') })],
  ];

  const closeDispute = (
    r: Pick<Req, 'account' | 'requestId' | 'idempotencyKey'>,
    dp: StripeObject,
    outcome: 'won' | 'lost',
  ) => {
    if (dp.status === 'won' || dp.status === 'lost') throw invalid(`Dispute ${dp.id} is already closed.`);
    dp.status = outcome;
    emit(r, 'charge.dispute.closed', dp);
    return dp;
  };

  /** Test-only controls; each takes the account's secret key like the API. Bodies are JSON. */
  const admin: [string, RegExp, (a: Account, body: Record<string, unknown>, m: string[]) => unknown][] = [
    [
      'POST',
      /^\/_sim\/webhook_endpoint$/,
      (a, b) => {
        a.webhook = typeof b.url === 'string' && typeof b.secret === 'string' ? { url: b.url, secret: b.secret } : null;
        return { webhook: a.webhook && { url: a.webhook.url } };
      },
    ],
    [
      'POST',
      /^\/_sim\/faults$/,
      (a, b) => {
        for (const k of Object.keys(NO_FAULTS) as (keyof typeof NO_FAULTS)[])
          if (typeof b[k] === 'number') a.faults[k] = b[k] as number;
        return a.faults;
      },
    ],
    ['GET', /^\/_sim\/faults$/, (a) => a.faults],
    [
      'GET',
      /^\/_sim\/objects\/([a-z_]+)$/,
      (a, _b, m) => ({ data: Object.values(a.objects).filter((x) => x.object === m[1]) }),
    ],
    ['GET', /^\/_sim\/requests$/, (a) => a.requests],
    /** The 3-D Secure challenge's outcome, as the customer's bank would report it. */
    [
      'POST',
      /^\/_sim\/authenticate\/([^/]+)$/,
      (a, b, m) => {
        const r = { account: a, requestId: newId('req'), idempotencyKey: null };
        const x = a.objects[m[1]!];
        if (!x || x.status !== 'requires_action') throw invalid(`${m[1]} is not waiting for authentication.`);
        const pm = get(a, x.payment_method as string, 'payment_method');
        if (b.outcome === 'fail') {
          const err = {
            type: 'card_error',
            code: 'payment_intent_authentication_failure',
            message: 'The provided PaymentMethod has failed authentication.',
            payment_method: pm,
          };
          x.status = 'requires_payment_method';
          x.next_action = null;
          if (x.object === 'payment_intent') {
            x.last_payment_error = err;
            emit(r, 'payment_intent.payment_failed', x);
          } else {
            x.last_setup_error = err;
            emit(r, 'setup_intent.setup_failed', x);
          }
          return x;
        }
        if (x.object === 'setup_intent') finishSetup(r, x, pm);
        else {
          try {
            settlePayment(r, x, pm);
          } catch (e) {
            if (!(e instanceof ApiError)) throw e;
          }
        }
        return x;
      },
    ],
    [
      'POST',
      /^\/_sim\/charges\/([^/]+)\/dispute$/,
      (a, b, m) => {
        const ch = get(a, m[1]!, 'charge');
        const dp = put(a, make.dispute(ch, typeof b.reason === 'string' ? b.reason : 'fraudulent'));
        ch.disputed = true;
        emit({ account: a, requestId: newId('req'), idempotencyKey: null }, 'charge.dispute.created', dp);
        return dp;
      },
    ],
    [
      // A refund that fails after it was accepted (Stripe: the card was closed or expired since the charge).
      'POST',
      /^\/_sim\/refunds\/([^/]+)\/fail$/,
      (a, b, m) => {
        const re = get(a, m[1]!, 'refund');
        if (re.status !== 'failed') {
          const ch = get(a, re.charge as string, 'charge');
          re.status = 'failed';
          re.failure_reason = typeof b.reason === 'string' ? b.reason : 'expired_or_canceled_card';
          ch.amount_refunded = (ch.amount_refunded as number) - (re.amount as number);
          ch.refunded = false;
          const r = { account: a, requestId: newId('req'), idempotencyKey: null };
          emit(r, 'charge.refund.updated', re);
          emit(r, 'refund.failed', re);
        }
        return re;
      },
    ],
    [
      'POST',
      /^\/_sim\/disputes\/([^/]+)\/close$/,
      (a, b, m) =>
        closeDispute(
          { account: a, requestId: newId('req'), idempotencyKey: null },
          get(a, m[1]!, 'dispute'),
          b.status === 'won' ? 'won' : 'lost',
        ),
    ],
  ];

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const url = new URL(req.url ?? '/', 'http://sim');
      const method = req.method ?? 'GET';
      const requestId = newId('req');
      const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, {
          'content-type': 'application/json',
          'request-id': requestId,
          'stripe-version': make.API_VERSION,
          ...CORS_HEADERS,
          ...headers,
        });
        res.end(JSON.stringify(body));
      };
      const fail = (e: unknown) => {
        if (e instanceof ApiError)
          return send(e.status, {
            error: { ...e.body, request_log_url: `https://dashboard.stripe.com/test/logs/${requestId}` },
          });
        send(500, { error: { type: 'api_error', message: `simulator error: ${(e as Error).message}` } });
      };
      if (url.pathname === '/_sim/health') return send(200, { ok: true });
      // The browser side (browser.ts): Stripe.js's stand-in, the card element's frame, the bank's challenge page.
      const html = (body: string, type = 'text/html; charset=utf-8') => {
        res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' });
        res.end(body);
      };
      if (method === 'OPTIONS') {
        res.writeHead(204, CORS_HEADERS);
        return res.end();
      }
      if (method === 'GET' && /^\/v3\/?$/.test(url.pathname)) return html(STRIPE_JS, 'text/javascript; charset=utf-8');
      if (method === 'GET' && url.pathname === '/elements/card') return html(cardFramePage());
      if (method === 'GET' && /^\/_sim\/authenticate\/[^/]+$/.test(url.pathname)) return html(challengePage());
      const key = /^Bearer ((?:sk|pk)_test_\S+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (!key)
        return send(401, {
          error: { type: 'invalid_request_error', message: 'Invalid API Key provided. Test keys start with sk_test_.' },
        });
      const publishable = key.startsWith('pk_');
      const account = state.account(publishable ? secretKeyOf(key) : key);
      try {
        if (url.pathname.startsWith('/_sim/')) {
          const route = admin.find(([m, re]) => m === method && re.test(url.pathname));
          if (!route) throw invalid(`Unrecognized request URL (${method}: ${url.pathname}).`);
          const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
          const refused = publishable
            ? publishableRefusal(
                account,
                method,
                url.pathname,
                typeof body.client_secret === 'string' ? body.client_secret : undefined,
              )
            : null;
          if (refused) return send(401, { error: { type: 'invalid_request_error', message: refused } });
          const out = route[2](account, body, route[1].exec(url.pathname)!);
          state.changed();
          return send(200, out);
        }
        const f = account.faults;
        if (f.timeout > 0) {
          f.timeout--;
          setTimeout(() => req.socket.destroy(), f.timeout_ms);
          return;
        }
        if (f.server_error > 0) {
          f.server_error--;
          return send(500, {
            error: { type: 'api_error', message: 'An unknown error occurred (injected by the simulator).' },
          });
        }
        const route = routes.find(([m, re]) => m === method && re.test(url.pathname));
        if (!route) throw invalid(`Unrecognized request URL (${method}: ${url.pathname}).`);
        const params = method === 'GET' ? parseForm(url.search.slice(1)) : parseForm(raw);
        if (publishable) {
          const refused = publishableRefusal(account, method, url.pathname, str(params.client_secret));
          if (refused) return send(401, { error: { type: 'invalid_request_error', message: refused } });
        }
        const idempotencyKey =
          method === 'POST' ? ((req.headers['idempotency-key'] as string | undefined) ?? null) : null;
        const countKey = `${method} ${route[1].source}`;
        account.requests[countKey] = (account.requests[countKey] ?? 0) + 1;
        let status = 200;
        let body: unknown;
        let replayed = false;
        if (idempotencyKey && account.idempotency[idempotencyKey]) {
          const first = account.idempotency[idempotencyKey]!;
          const fp = fingerprint(method, url.pathname, raw);
          if (first.fingerprint !== fp)
            throw new ApiError(400, {
              type: 'idempotency_error',
              message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${idempotencyKey}' if you meant to execute a different request.`,
            });
          ({ status, body } = first);
          replayed = true;
        } else {
          try {
            const out = route[2](
              { method, path: url.pathname, params, account, idempotencyKey, requestId },
              route[1].exec(url.pathname)!,
            );
            status = out.status ?? 200;
            body = out.body;
          } catch (e) {
            if (!(e instanceof ApiError)) throw e;
            status = e.status;
            body = { error: { ...e.body, request_log_url: `https://dashboard.stripe.com/test/logs/${requestId}` } };
          }
          // Snapshot: later changes to the object never alter a replayed response.
          body = structuredClone(body);
          if (idempotencyKey)
            account.idempotency[idempotencyKey] = { fingerprint: fingerprint(method, url.pathname, raw), status, body };
          state.changed();
        }
        const chargeLost =
          f.lose_charge_response_percent > 0 &&
          method === 'POST' &&
          url.pathname === '/v1/payment_intents' &&
          idempotencyKey !== null &&
          percentileOf(idempotencyKey) < f.lose_charge_response_percent;
        if (f.lose_response > 0 || chargeLost) {
          if (!chargeLost) f.lose_response--;
          account.requests.lost = (account.requests.lost ?? 0) + 1;
          state.changed();
          req.socket.destroy();
          return;
        }
        send(status, body, {
          ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
          ...(replayed ? { 'idempotent-replayed': 'true' } : {}),
        });
      } catch (e) {
        fail(e);
      }
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host ?? '127.0.0.1', () => resolve(server));
  });
}

/** A key's fixed place in 0…99: the same key is always chosen or never, whatever the order of requests. */
const percentileOf = (key: string) => createHash('sha256').update(key).digest().readUInt32BE(0) % 100;

const fingerprint = (method: string, path: string, raw: string) =>
  createHash('sha256')
    .update(
      `${method} ${path}\n${[...new URLSearchParams(raw)]
        .map(([k, v]) => `${k}=${v}`)
        .sort()
        .join('&')}`,
    )
    .digest('hex');
