/** Usage corrections (docs/design.md §6): what an operator asked to cancel or replace, as logged. */

/** A correction request after every rule. */
export type NewCorrection =
  | { kind: 'cancel'; ids: string[] }
  | { kind: 'replace'; startMs: number; endMs: number; ids: string[]; rows: string };

export interface CorrectionRow {
  id: string;
  account_id: string;
  /** The customer id of account_id. */
  customer_id: string;
  meter_id: string;
  kind: 'cancel' | 'replace';
  cancel_ids: string[];
  replace_start: Date | null;
  replace_end: Date | null;
  replacement_ids: string[];
  replacement_rows: string;
  state: 'pending' | 'applied';
  created_by_user: string;
  created_by_client: string;
  created_at: Date;
  applied_at: Date | null;
}
