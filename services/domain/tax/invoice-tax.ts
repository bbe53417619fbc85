/** SQL of an account's tax profile, for a query over `accounts` aliased `a`. */
export const TAX_PROFILE_COLUMNS = (a: string) =>
  `${a}.tax_exempt, ${a}.address->>'country' AS country, ${a}.address->>'region' AS region, ${a}.net_terms_days`;
