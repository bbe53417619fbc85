import type { ExportKind } from '../../../shared/vocabulary.js';

/**
 * The columns of every export kind, in file order (docs/exports.md lists the same; test/unit/exports.test.ts
 * checks it does). `decimal` is exact decimal text in both formats (Parquet: a UTF8 string), never a float.
 */
export type ColumnType = 'string' | 'decimal' | 'int' | 'timestamp';
export interface ExportColumn {
  name: string;
  type: ColumnType;
}

const c = (spec: string): ExportColumn[] =>
  spec
    .trim()
    .split(/\s+/)
    .map((s) => {
      const [name, type] = s.split(':') as [string, ColumnType];
      return { name, type };
    });

export const EXPORT_COLUMNS: Record<ExportKind, ExportColumn[]> = {
  usage: c(`customer_id:string account_id:string meter_id:string record_id:string timestamp:timestamp
    value:decimal received_at:timestamp dimensions:string`),
  invoices: c(`invoice_id:string number:string customer_id:string subscription_id:string status:string
    reason:string currency:string subtotal:decimal tax:decimal amount:decimal amount_credited:decimal
    period_start:string period_end:string created_at:timestamp due_at:timestamp paid_at:timestamp`),
  invoice_lines: c(`invoice_id:string position:int customer_id:string type:string product_id:string
    meter_id:string description:string quantity:decimal unit_price:decimal amount:decimal currency:string
    tax_rate_id:string invoice_created_at:timestamp`),
  payments: c(`invoice_id:string attempt:int customer_id:string status:string amount:decimal currency:string
    charge_id:string failure_code:string manual:string created_at:timestamp completed_at:timestamp`),
  credit_notes: c(`credit_note_id:string number:string invoice_id:string customer_id:string type:string
    currency:string amount:decimal tax:decimal reason:string refund_status:string refund_id:string
    created_at:timestamp`),
  customers: c(`customer_id:string account_id:string name:string email:string external_id:string
    legal_name:string country:string tax_exempt:string net_terms_days:int created_at:timestamp
    updated_at:timestamp`),
  journal_entries: c(`entry_id:string document_type:string document_id:string document_number:string
    customer_id:string ledger_account:string debit:decimal credit:decimal currency:string posted_at:timestamp`),
};
