import Type from 'typebox';
import { PrintableText } from './text.js';
import { PaginationQuery, listOf } from '../http/pagination.js';

/** Test clocks (docs/test-clocks.md): a simulated time some customers live at, advanced by the operator. */

const FrozenTime = (description: string) => Type.String({ format: 'date-time', description });

export const CreateTestClockBody = Type.Object(
  {
    frozen_time: FrozenTime('RFC 3339: the time the clock starts at (its customers live at it)'),
    name: Type.Optional(PrintableText({ maxLength: 200, description: 'a label for the operator' })),
  },
  { additionalProperties: false },
);
export type CreateTestClockBody = Type.Static<typeof CreateTestClockBody>;

export const AdvanceTestClockBody = Type.Object(
  {
    frozen_time: FrozenTime(
      'RFC 3339, after the clock’s frozen_time: the time to move to; everything due on the way runs in order',
    ),
  },
  { additionalProperties: false },
);
export type AdvanceTestClockBody = Type.Static<typeof AdvanceTestClockBody>;

export const AttachCustomerBody = Type.Object(
  {
    customer_id: Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'cus_… of a customer of the deployment without subscriptions yet',
    }),
  },
  { additionalProperties: false },
);
export type AttachCustomerBody = Type.Static<typeof AttachCustomerBody>;

export const TestClockSchema = Type.Object(
  {
    id: Type.String({ examples: ['clock_4fH9sK1xQ7mV4rT8bN3cJ0'] }),
    name: Type.Union([Type.String(), Type.Null()]),
    frozen_time: Type.String({ format: 'date-time', description: 'the time the clock’s customers live at' }),
    status: Type.Enum(['ready', 'advancing'], {
      description: 'advancing while an advance runs (or after one that crashed, until it is repeated)',
    }),
    customer_ids: Type.Array(Type.String(), { description: 'cus_… of the customers on the clock' }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);

export const TestClockListSchema = listOf(TestClockSchema);

export const ListTestClocksQuery = Type.Object(PaginationQuery, { additionalProperties: false });
export type ListTestClocksQuery = Type.Static<typeof ListTestClocksQuery>;
