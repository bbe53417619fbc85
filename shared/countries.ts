/**
 * ISO 3166-1 alpha-2 country codes, as the ICU data of Node knows them (full-icu is built in): a code is one when
 * ICU has a name for it. "ZZ" (unknown region) and unassigned codes, which ICU echoes back, are not.
 */
const names = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'code' });

export function isCountryCode(code: string): boolean {
  if (!/^[A-Z]{2}$/.test(code) || code === 'ZZ') return false;
  try {
    return names.of(code) !== code;
  } catch {
    return false;
  }
}
