import type { RouteModuleFactory } from '../../../shared/http/route.js';
import { createExportRoute } from './create.js';
import { getExportRoute } from './get.js';
import { listExportsRoute } from './list.js';
import { createScheduleRoute } from './schedule-create.js';
import { deleteScheduleRoute } from './schedule-delete.js';
import { getScheduleRoute } from './schedule-get.js';
import { listSchedulesRoute } from './schedule-list.js';

/** /v1/exports and /v1/export_schedules (docs/exports.md); the billing role runs the exports. */
export const exportsModule: RouteModuleFactory = (deps) => ({
  name: 'exports',
  area: 'control',
  register(server) {
    for (const route of [
      createExportRoute,
      listExportsRoute,
      getExportRoute,
      createScheduleRoute,
      listSchedulesRoute,
      getScheduleRoute,
      deleteScheduleRoute,
    ])
      server.route(route(deps));
  },
});
