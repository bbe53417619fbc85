/** SQL pieces every usage module builds on (a leaf: rollups, cancellations and distinct sets import it). */

export const HOUR_MS = 3_600_000;

/**
 * `usage_hourly.group_key` of a row's dimension set (two parallel array columns): `<len>:<key><len>:<value>…`
 * over the sorted keys, so distinct sets never share a key; '' without dimensions (the rows written before issue 18).
 */
export function groupKeySql(keys = 'dim_keys', values = 'dim_values'): string {
  return `arrayStringConcat(arrayMap((k, v) -> concat(toString(length(k)), ':', k, toString(length(v)), ':', v), ${keys}, ${values}))`;
}

/** A ClickHouse string literal (18.16 has no query parameters). */
export function chString(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
