/**
 * THE rule of when an invoice's money is in flight: an attempt recorded but not completed — `pending` (the processor
 * being called) or `unknown` (called, its answer lost; the charge may have been made). Until it is settled the
 * invoice is neither voided nor credited: either could cancel what the processor already took.
 */
export const PAYMENT_IN_FLIGHT_SQL = (invoiceId: string) =>
  `EXISTS (SELECT 1 FROM payment_attempts pa WHERE pa.invoice_id = ${invoiceId} AND pa.status IN ('pending', 'unknown'))`;
