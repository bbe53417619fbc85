import type { RequestContext } from '../../../shared/http/context.js';
import { queryValidator } from '../../../shared/http/validation.js';
import { ListEventsQuery, type EventListRequest } from '../../../shared/api/events.js';

/** Events' one validation place. */
const listQuery = queryValidator<ListEventsQuery>(ListEventsQuery);

export const parseListEvents = (ctx: RequestContext): EventListRequest => listQuery.parseQuery(ctx.query);
