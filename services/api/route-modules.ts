import type { RouteModuleFactory } from './modules.js';

/** Every route module the api mounts, in registration order. Each area adds its factory here. */
export const ROUTE_MODULES: RouteModuleFactory[] = [];
