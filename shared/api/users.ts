import Type from 'typebox';
import { listOf } from '../http/pagination.js';
import { OPERATOR_ROLES } from '../auth/roles.js';

const Role = Type.Enum([...OPERATOR_ROLES], {
  description:
    'owner, admin, billing (prices, plans, invoices, credit notes), support (reads only), developer (meters, webhooks, API clients; no money)',
});

export const UpdateUserBody = Type.Object({ role: Role }, { additionalProperties: false });
export type UpdateUserBody = Type.Static<typeof UpdateUserBody>;

export const OperatorUserSchema = Type.Object(
  {
    id: Type.String({ description: 'usr_…' }),
    email: Type.String(),
    role: Role,
    created_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export const OperatorUserListSchema = listOf(OperatorUserSchema);
