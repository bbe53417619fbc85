/** GET /v1/events shows 30 days of events (docs/design.md §8). */
export const EVENT_RETENTION_DAYS = 30;
/** Rows stay 36 days: a usage record retried as late as the ingress accepts it (35 days) still finds its event. */
export const EVENT_ROW_DAYS = 36;
