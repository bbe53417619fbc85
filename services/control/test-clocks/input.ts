import type { RequestContext } from '../../../shared/http/context.js';
import { bodyValidator, queryValidator } from '../../../shared/http/validation.js';
import type { PageRequest } from '../../../shared/http/pagination.js';
import {
  AdvanceTestClockBody,
  AttachCustomerBody,
  CreateTestClockBody,
  ListTestClocksQuery,
} from '../../../shared/api/test-clocks.js';
import { ValidationError } from '../../../shared/errors.js';
import type { NewTestClock } from '../../domain/test-clocks/types.js';

/** Test clocks' one validation place: the schemas, then a name that is not blank. */
const createBody = bodyValidator<CreateTestClockBody>(CreateTestClockBody);
const advanceBody = bodyValidator<AdvanceTestClockBody>(AdvanceTestClockBody);
const attachBody = bodyValidator<AttachCustomerBody>(AttachCustomerBody);
const listQuery = queryValidator<ListTestClocksQuery>(ListTestClocksQuery);

export const parseListTestClocks = (ctx: RequestContext): PageRequest => listQuery.parseQuery(ctx.query);

export function parseNewTestClock(ctx: RequestContext): NewTestClock {
  const input = createBody.parse(ctx.body);
  const name = input.name === undefined ? null : input.name.trim();
  if (name === '') throw new ValidationError([{ field: 'name', message: 'must not be blank' }]);
  return { accountId: ctx.principal!.accountId, name, frozenTime: new Date(input.frozen_time) };
}

/** The target time; "after the clock's time" needs the clock, so the domain checks it (422 on frozen_time). */
export const parseAdvance = (ctx: RequestContext): Date => new Date(advanceBody.parse(ctx.body).frozen_time);

export const parseAttachCustomer = (ctx: RequestContext): string => attachBody.parse(ctx.body).customer_id;
