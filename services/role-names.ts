/** The process roles, in start order: a leaf module, so a supervisor names them without loading their code. */
export const ROLES = ['api', 'consumer', 'dispatcher', 'billing'] as const;
export type Role = (typeof ROLES)[number];
