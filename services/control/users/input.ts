import type { RequestContext } from '../../../shared/http/context.js';
import { bodyValidator, queryValidator } from '../../../shared/http/validation.js';
import { PaginationQuery, type PageRequest } from '../../../shared/http/pagination.js';
import Type from 'typebox';
import type { OperatorRole } from '../../../shared/auth/roles.js';
import { UpdateUserBody } from '../../../shared/api/users.js';

/** The operator users' one validation place. */
const updateBody = bodyValidator<UpdateUserBody>(UpdateUserBody);
const listQuery = queryValidator<PageRequest>(Type.Object({ ...PaginationQuery }, { additionalProperties: false }));

export const parseListUsers = (ctx: RequestContext): PageRequest => listQuery.parseQuery(ctx.query);

export const parseUserRole = (ctx: RequestContext): OperatorRole => updateBody.parse(ctx.body).role;
