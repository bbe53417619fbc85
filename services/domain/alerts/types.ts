import type { AlertMetric } from '../../../shared/vocabulary.js';

/** An alert as stored (docs/alerts.md). `account_id` null: every customer of the deployment meter. */
export interface AlertRow {
  id: string;
  account_id: string | null;
  /** The watched customer's cus_ id (null with account_id). */
  customer_id: string | null;
  metric: AlertMetric;
  meter_id: string | null;
  currency: string | null;
  /** Ascending, distinct, canonical decimal strings. */
  thresholds: string[];
  created_at: Date;
}

/** A validated create request; who it is on is decided with the caller (createAlert). */
export interface NewAlert {
  customerId: string | undefined;
  metric: AlertMetric;
  meterId: string | null;
  currency: string | null;
  thresholds: string[];
}

/** Whose alerts a list or lookup may see: a customer only its own; the operator every one (or one customer's). */
export type AlertViewer = { kind: 'account'; accountId: string } | { kind: 'operator'; accountId?: string };
