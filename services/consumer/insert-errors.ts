import { ClickHouseError } from '@clickhouse/client';

/**
 * ClickHouse exception codes meaning "this data cannot be inserted", as opposed to "the server is down,
 * busy or misconfigured" (which a retry may fix). Parsing, type and value-range errors.
 */
const DATA_ERROR_CODES = new Set([
  '6', // CANNOT_PARSE_TEXT
  '26', // CANNOT_PARSE_QUOTED_STRING
  '27', // CANNOT_PARSE_INPUT_ASSERTION_FAILED
  '32', // ATTEMPT_TO_READ_AFTER_EOF
  '33', // CANNOT_READ_ALL_DATA
  '38', // CANNOT_PARSE_DATE
  '41', // CANNOT_PARSE_DATETIME
  '53', // TYPE_MISMATCH
  '69', // ARGUMENT_OUT_OF_BOUND
  '70', // CANNOT_CONVERT_TYPE
  '72', // CANNOT_PARSE_NUMBER
  '117', // INCORRECT_DATA
  '131', // TOO_LARGE_STRING_SIZE
  '407', // DECIMAL_OVERFLOW
]);

export function isDataError(err: unknown): boolean {
  return err instanceof ClickHouseError && DATA_ERROR_CODES.has(String(err.code));
}

export function describeInsertError(err: unknown): string {
  if (err instanceof ClickHouseError) return `ClickHouse error ${err.code} (${err.type}): ${err.message.split('\n')[0]}`;
  const e = err as NodeJS.ErrnoException;
  return e?.code ? `${e.code}: ${e.message}` : String(e?.message ?? err);
}
