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

/**
 * The server's exception code. @clickhouse/client parses it only from current servers' messages
 * ("… (TYPE_NAME)"); 18.16 answers "Code: 27, e.displayText() = DB::Exception: …", read here.
 */
export function clickhouseErrorCode(err: unknown): string | undefined {
  if (err instanceof ClickHouseError) return String(err.code);
  const m = err instanceof Error ? /^Code: (\d+), e\.displayText\(\) = DB::Exception/.exec(err.message) : null;
  return m?.[1];
}

export function isDataError(err: unknown): boolean {
  const code = clickhouseErrorCode(err);
  return code !== undefined && DATA_ERROR_CODES.has(code);
}

export function describeInsertError(err: unknown): string {
  const code = clickhouseErrorCode(err);
  if (code !== undefined) return `ClickHouse error ${code}: ${(err as Error).message.split('\n')[0]!.slice(0, 300)}`;
  const e = err as NodeJS.ErrnoException;
  return e?.code ? `${e.code}: ${e.message}` : String(e?.message ?? err);
}
