import { useApp } from './app-context.js';
import { useAsync } from './hooks.js';
import type { ListPage } from '../lib/api.js';
import type { Customer } from '../lib/types.js';

/** A customer as people tell it: its name and the operator's own id for it (never the bare cus_ id). */
export function customerLabel(c: Pick<Customer, 'name' | 'external_id'>): string {
  return c.external_id ? `${c.name} (${c.external_id})` : c.name;
}

/**
 * Operators: the deployment's customers (first 100, newest first) and a label for any customer id — what every
 * page shows where a customer is named or asked for. A customer's own token has none (an empty list).
 */
export function useCustomers() {
  const { api, isAdmin } = useApp();
  return useAsync(async () => {
    const list = isAdmin ? (await api.get<ListPage<Customer>>('/v1/customers', { per_page: 100 })).data : [];
    const byId = new Map(list.map((c) => [c.id, c]));
    return {
      list,
      label: (id: string) => {
        const c = byId.get(id);
        return c ? customerLabel(c) : id;
      },
    };
  }, [isAdmin]);
}

/** "Customer" and a <select> of the deployment's customers by name and external id; '' is `none` ("every customer"). */
export function CustomerSelect({
  customers,
  value,
  onChange,
  none,
  name = 'customer',
}: {
  customers: Customer[];
  value: string;
  onChange: (id: string) => void;
  none: string;
  name?: string;
}) {
  return (
    <label>
      Customer{' '}
      <select name={name} value={value} onChange={(e) => onChange((e.currentTarget as HTMLSelectElement).value)}>
        <option value="">{none}</option>
        {customers.map((c) => (
          <option key={c.id} value={c.id}>
            {customerLabel(c)}
          </option>
        ))}
      </select>
    </label>
  );
}
