import type { ErrorObject } from 'ajv';
import { bodyValidator, queryValidator, toFieldErrors } from '../../../shared/http/validation.js';
import type { RequestContext } from '../../../shared/http/context.js';
import type { PageRequest } from '../../../shared/http/pagination.js';
import { ValidationError, type FieldError } from '../../../shared/errors.js';
import {
  CreateWebhookBody,
  ListWebhooksQuery,
  UpdateWebhookBody,
  type CreateWebhookInput,
  type UpdateWebhookInput,
} from '../../../shared/api/webhooks.js';
import { webhookHostProblem, webhookUrlProblem } from '../../domain/webhooks/url-safety.js';

const createValidator = bodyValidator<CreateWebhookInput>(CreateWebhookBody);
const updateValidator = bodyValidator<UpdateWebhookInput>(UpdateWebhookBody);
const listQuery = queryValidator<PageRequest>(ListWebhooksQuery);

/** Webhooks' one validation place: schema errors (two rewritten to name the exact place) and the URL safety rules. */
export const parseListQuery = (ctx: RequestContext): PageRequest => listQuery.parseQuery(ctx.query);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Schema errors, with two rewritten to name the exact place: a duplicate event names its index
 * (`events[2]`), an empty PATCH says what it may contain. Then the URL safety rules.
 */
function errorsOf(
  check: (v: unknown) => boolean,
  errors: () => ErrorObject[] | null | undefined,
  body: unknown,
  allowPrivate: boolean,
): FieldError[] {
  const raw = check(body) ? [] : (errors() ?? []);
  const out = toFieldErrors(raw.filter((e) => e.keyword !== 'uniqueItems' && e.keyword !== 'minProperties'));
  if (!isObject(body)) return out;
  if (raw.some((e) => e.keyword === 'minProperties'))
    out.push({ field: '', message: 'must contain at least one of url, events, status, secret' });
  const events = body.events;
  if (Array.isArray(events)) {
    events.forEach((e, i) => {
      const first = events.indexOf(e);
      if (typeof e === 'string' && first < i)
        out.push({ field: `events[${i}]`, message: `duplicates events[${first}]` });
    });
  }
  if (typeof body.url === 'string' && !out.some((e) => e.field === 'url')) {
    const problem = webhookUrlProblem(body.url, allowPrivate);
    if (problem) out.push({ field: 'url', message: problem });
  }
  return out;
}

export function parseCreateWebhook(body: unknown, allowPrivate: boolean): CreateWebhookInput {
  if (body === undefined) createValidator.parse(body); // throws "a JSON body is required"
  const errors = errorsOf(createValidator.check, () => createValidator.check.errors, body, allowPrivate);
  if (errors.length) throw new ValidationError(errors);
  return body as CreateWebhookInput;
}

export function parseUpdateWebhook(body: unknown, allowPrivate: boolean): UpdateWebhookInput {
  if (body === undefined) updateValidator.parse(body);
  const errors = errorsOf(updateValidator.check, () => updateValidator.check.errors, body, allowPrivate);
  if (errors.length) throw new ValidationError(errors);
  return body as UpdateWebhookInput;
}

/** The registration-time DNS check of `url` (webhookHostProblem): 422 on `url` when its host resolves inside. */
export async function refuseNonPublicHost(url: string, allowPrivate: boolean): Promise<void> {
  const problem = await webhookHostProblem(url, allowPrivate);
  if (problem) throw new ValidationError([{ field: 'url', message: problem }]);
}
