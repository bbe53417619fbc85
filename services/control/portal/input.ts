import type { RequestContext } from '../../../shared/http/context.js';
import { ValidationError } from '../../../shared/errors.js';
import { bodyValidator } from '../../../shared/http/validation.js';
import { CreatePortalSessionBody } from '../../../shared/api/portal.js';

/** The portal's one validation place for its API (schemas in shared/api/portal.ts). */
const createBody = bodyValidator<CreatePortalSessionBody>(CreatePortalSessionBody);

export function parseCreatePortalSession(ctx: RequestContext): CreatePortalSessionBody {
  const body = createBody.parse(ctx.body);
  let url: URL | undefined;
  try {
    url = new URL(body.return_url);
  } catch {
    url = undefined;
  }
  // The portal links to it: only a web address, never javascript: or data:.
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:'))
    throw new ValidationError([{ field: 'return_url', message: 'must be an http or https URL' }]);
  return body;
}
