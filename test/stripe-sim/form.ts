/**
 * Stripe's request encoding: `application/x-www-form-urlencoded` with bracket notation for nesting
 * (`metadata[invoice_id]=inv_1`, `expand[0]=latest_charge`, `card[exp_month]=12`). Every value arrives as a
 * string; the routes read numbers and booleans out of it the way Stripe does.
 */
export type FormValue = string | FormObject | FormValue[];
export interface FormObject {
  [k: string]: FormValue;
}

export function parseForm(body: string): FormObject {
  const out: FormObject = {};
  for (const [rawKey, value] of new URLSearchParams(body)) {
    const path = keyPath(rawKey);
    let node: FormObject | FormValue[] = out;
    for (let i = 0; i < path.length; i++) {
      const k = path[i]!;
      const last = i === path.length - 1;
      const nextIsIndex = !last && /^\d*$/.test(path[i + 1]!);
      if (Array.isArray(node)) {
        const idx = k === '' ? node.length : Number(k);
        if (last) node[idx] = value;
        else node = (node[idx] ??= nextIsIndex ? [] : {}) as FormObject | FormValue[];
      } else {
        if (last) node[k] = value;
        else node = (node[k] ??= nextIsIndex ? [] : {}) as FormObject | FormValue[];
      }
    }
  }
  return out;
}

/** `a[b][0]` → ['a', 'b', '0']. */
function keyPath(key: string): string[] {
  const first = key.indexOf('[');
  if (first < 0) return [key];
  const parts = [key.slice(0, first)];
  for (const m of key.slice(first).matchAll(/\[([^\]]*)\]/g)) parts.push(m[1]!);
  return parts;
}

export const str = (v: FormValue | undefined): string | undefined => (typeof v === 'string' ? v : undefined);
export const obj = (v: FormValue | undefined): FormObject | undefined =>
  v !== undefined && typeof v === 'object' && !Array.isArray(v) ? v : undefined;
export const bool = (v: FormValue | undefined): boolean => v === 'true';
