import { OPERATOR_ROLES, type OperatorRole, isOperatorRole } from './auth/roles.js';
import { allowing, bool, type Parser, url, type VarSpec } from './config-parsers.js';

/** Single sign-on of operator staff through an OpenID Connect provider (docs/sso.md), a part of the one Config. */
export interface SsoConfig {
  /** The OpenID Connect issuer (its discovery document is `SSO_ISSUER/.well-known/openid-configuration`); empty: SSO off. */
  SSO_ISSUER: string;
  SSO_CLIENT_ID: string;
  /** The client secret at the provider (client_secret_basic); never logged. */
  SSO_CLIENT_SECRET: string;
  /** Email domains whose verified addresses may sign in (lower case). */
  SSO_ALLOWED_DOMAINS: readonly string[];
  /** The id_token claim whose value(s) SSO_ROLE_MAP maps to a role (a string or an array of strings). */
  SSO_ROLE_CLAIM: string;
  SSO_ROLE_MAP: SsoRoleMap;
  /** Off: users whose email is of an SSO_ALLOWED_DOMAINS domain can't sign in with a password. */
  SSO_PASSWORD_SIGNIN: boolean;
}

/** Claim value → role, in the order written (the first value the claim carries wins), and the role of everyone else. */
export interface SsoRoleMap {
  entries: readonly { value: string; role: OperatorRole }[];
  defaultRole: OperatorRole;
}

const plain: Parser<string> = allowing('text', (raw) => raw.trim());

const domains: Parser<readonly string[]> = allowing('comma-separated email domains', (raw) => {
  const list = raw
    .split(',')
    .map((d) => d.trim().toLowerCase())
    .filter((d) => d !== '');
  for (const d of list)
    if (!/^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(d)) throw new Error(`must list domains like example.com, got "${d}"`);
  return Object.freeze(list);
});

/** `value=role,value=role,*=role`: `*` is the role of a user whose claim matches no entry. */
export const roleMap: Parser<SsoRoleMap> = allowing(
  `comma-separated claim=role pairs, \`*=role\` for everyone else; roles: ${OPERATOR_ROLES.join(', ')}`,
  (raw) => {
    const entries: { value: string; role: OperatorRole }[] = [];
    let defaultRole: OperatorRole = 'support';
    for (const part of raw.split(',')) {
      if (part.trim() === '') continue;
      const eq = part.lastIndexOf('=');
      const value = part.slice(0, eq).trim();
      const role = part.slice(eq + 1).trim();
      if (eq <= 0 || value === '') throw new Error(`must be claim=role pairs, got "${part.trim()}"`);
      if (!isOperatorRole(role)) throw new Error(`"${role}" is not a role (${OPERATOR_ROLES.join(', ')})`);
      if (value === '*') defaultRole = role;
      else entries.push({ value, role });
    }
    return Object.freeze({ entries: Object.freeze(entries), defaultRole });
  },
);

export const SSO_SPEC: { [K in keyof SsoConfig]: VarSpec<SsoConfig[K]> } = {
  SSO_ISSUER: {
    parse: url(['https', 'http']),
    default: '',
    describe:
      'OpenID Connect issuer operator staff sign in with (docs/sso.md); its discovery document is read at the first sign-in; empty: single sign-on is off',
  },
  SSO_CLIENT_ID: { parse: plain, default: '', describe: "meterline's client id at the SSO_ISSUER" },
  SSO_CLIENT_SECRET: {
    parse: plain,
    default: '',
    describe: "meterline's client secret at the SSO_ISSUER (client_secret_basic); never logged",
  },
  SSO_ALLOWED_DOMAINS: {
    parse: domains,
    default: Object.freeze([]) as readonly string[],
    shownDefault: 'empty',
    describe: 'email domains whose verified addresses may sign in through SSO (example.com,example.org)',
  },
  SSO_ROLE_CLAIM: {
    parse: plain,
    default: 'groups',
    describe: 'id_token claim (a string or an array of strings) that SSO_ROLE_MAP maps to an operator role',
  },
  SSO_ROLE_MAP: {
    parse: roleMap,
    default: Object.freeze({ entries: Object.freeze([]), defaultRole: 'support' as const }),
    shownDefault: '`*=support`',
    describe:
      'claim value → operator role (`billing-team=billing,admins=admin,*=support`): the first entry whose value the claim carries wins, `*` for everyone else; followed at every sign-in',
  },
  SSO_PASSWORD_SIGNIN: {
    parse: bool,
    default: true,
    describe: 'false: users whose email is in SSO_ALLOWED_DOMAINS can sign in only through SSO, not with a password',
  },
};

/** SSO needs its client and at least one domain once an issuer is set. */
export function ssoCrossChecks(c: SsoConfig): { variable: string; message: string }[] {
  if (!c.SSO_ISSUER) return [];
  const problems: { variable: string; message: string }[] = [];
  if (!c.SSO_CLIENT_ID) problems.push({ variable: 'SSO_CLIENT_ID', message: 'is required when SSO_ISSUER is set' });
  if (!c.SSO_CLIENT_SECRET)
    problems.push({ variable: 'SSO_CLIENT_SECRET', message: 'is required when SSO_ISSUER is set' });
  if (!c.SSO_ALLOWED_DOMAINS.length)
    problems.push({ variable: 'SSO_ALLOWED_DOMAINS', message: 'must name at least one domain when SSO_ISSUER is set' });
  return problems;
}

/** The domain of an email address, lower case. */
export const emailDomain = (email: string): string =>
  email
    .slice(email.lastIndexOf('@') + 1)
    .trim()
    .toLowerCase();

/** Whether this email's domain signs in through SSO (and so, with SSO_PASSWORD_SIGNIN off, not with a password). */
export function isSsoDomain(c: SsoConfig, email: string): boolean {
  return c.SSO_ISSUER !== '' && c.SSO_ALLOWED_DOMAINS.includes(emailDomain(email));
}
