import type { ApiRoutes } from './api-call.js';
import type { PortalVisit } from './access.js';

/** The change-plan form (filled in by the plan-change step). */
export async function planChoices(_api: ApiRoutes, _visit: PortalVisit, _sub: any, _plan: any): Promise<string> {
  return '';
}
