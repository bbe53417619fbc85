import type { RouteRegistry } from '../../../shared/http/route.js';
import type { SsoContext } from './context.js';
import { registerSsoCallback } from './callback.js';
import { registerSsoStart } from './start.js';

/** Single sign-on of operator staff (docs/sso.md), served beside the authorization pages whose session it starts. */
export function registerSso(server: RouteRegistry, sso: SsoContext): void {
  registerSsoStart(server, sso);
  registerSsoCallback(server, sso);
}
