import type { KV } from '@nats-io/kv';
import type { RouteModuleFactory } from '../../../shared/http/route.js';
import { openRevocationBucket } from '../../../shared/auth/revocations.js';
import { listUsersRoute } from './list.js';
import { updateUserRoute } from './update.js';

/** /v1/users: the operator account's users and their roles (docs/roles.md). */
export const usersModule: RouteModuleFactory = (deps) => {
  let bucket: Promise<KV> | undefined;
  const revocations = () =>
    (bucket ??= openRevocationBucket(deps.nats, deps.natsNames.revocationBucket).catch((err) => {
      bucket = undefined; // the next role change tries again
      throw err;
    }));
  return {
    name: 'users',
    area: 'control',
    register(server) {
      server.route(listUsersRoute(deps));
      server.route(updateUserRoute(deps, revocations));
    },
  };
};
