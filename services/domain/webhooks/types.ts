/** A webhook as stored (its sealed secret is never read here). */
export interface WebhookRow {
  id: string;
  url: string;
  events: string[];
  status: 'enabled' | 'disabled';
  /** deployment: receives every customer's events (operator mode). */
  scope: 'account' | 'deployment';
  created_at: Date;
  updated_at: Date;
}

/** One delivery attempt of an event to a webhook. */
export interface DeliveryRow {
  id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  status: 'pending' | 'succeeded' | 'failed';
  response_status: number | null;
  error: string | null;
  duration_ms: number | null;
  created_at: Date;
  /** When the request was sent; null while the attempt is pending. */
  attempted_at: Date | null;
  next_attempt_at: Date | null;
}
