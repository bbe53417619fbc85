import { useState } from 'preact/hooks';
import { useApp } from '../ui/app-context.js';
import { useAction, useAsync } from '../ui/hooks.js';
import { ErrorBox, formValues, Panel } from '../ui/components.js';
import { formatTime } from '../lib/format.js';
import type { SellerSettings } from '../lib/types.js';

/** 256 KiB, as the API checks (services/domain/seller/logo.ts): refused here before a long upload. */
const LOGO_MAX_BYTES = 256 * 1024;

/** A picked file as the data: URL the API takes (FileReader, no upload endpoint). */
function readAsDataUrl(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(String(r.result));
    r.onerror = () => reject(r.error ?? new Error('the file could not be read'));
    r.readAsDataURL(file);
  });
}

/** An empty field is null: the environment's default prints (SELLER_*, INVOICE_FOOTER, MAIL_FROM). */
const orNull = (v: string | undefined) => (v && v.trim() ? v.trim() : null);

/**
 * Operators (admin): who issues the deployment's invoices, credit notes and emails — legal name, address, tax id,
 * support email, footer, the emails' From and a logo (docs/seller-settings.md).
 */
export function SellerPage() {
  const { api } = useApp();
  const settings = useAsync(() => api.get<SellerSettings>('/v1/seller_settings'), []);
  const [saved, setSaved] = useState(false);
  const [logoError, setLogoError] = useState<string | null>(null);
  const save = useAction(async (body: Record<string, unknown>) => {
    setSaved(false);
    await api.patch<SellerSettings>('/v1/seller_settings', body);
    settings.reload();
    setSaved(true);
  });
  const s = settings.data;
  const onSubmit = (e: Event) => {
    const v = formValues(e);
    const hasAddress = ['line1', 'city', 'postal_code', 'country'].some((k) => orNull(v[k]));
    void save.run({
      legal_name: orNull(v.legal_name),
      address: hasAddress
        ? {
            line1: v.line1 ?? '',
            ...(orNull(v.line2) ? { line2: v.line2!.trim() } : {}),
            city: v.city ?? '',
            postal_code: v.postal_code ?? '',
            ...(orNull(v.region) ? { region: v.region!.trim() } : {}),
            country: v.country ?? '',
          }
        : null,
      tax_ids: orNull(v.tax_id_value) ? [{ type: v.tax_id_type || 'eu_vat', value: v.tax_id_value!.trim() }] : [],
      support_email: orNull(v.support_email),
      email_from: orNull(v.email_from),
      invoice_footer: orNull(v.invoice_footer),
    });
  };
  const onLogo = async (e: Event) => {
    const input = e.currentTarget as HTMLInputElement;
    const file = input.files?.[0];
    setLogoError(null);
    if (!file) return;
    if (!['image/png', 'image/jpeg'].includes(file.type)) return setLogoError('Choose a PNG or JPEG image.');
    if (file.size > LOGO_MAX_BYTES) return setLogoError(`The logo is ${file.size} bytes; at most ${LOGO_MAX_BYTES}.`);
    void save.run({ logo: await readAsDataUrl(file) });
    input.value = '';
  };
  const tax = s?.tax_ids[0];
  return (
    <>
      <Panel title="Seller">
        <p class="hint">
          Printed on every invoice and credit note PDF and in every email. An empty field prints the server’s default
          (SELLER_NAME, SELLER_ADDRESS, SELLER_TAX_ID, INVOICE_FOOTER, MAIL_FROM).
          {s?.updated_at && <> Last changed {formatTime(s.updated_at)}.</>}
        </p>
        <ErrorBox error={settings.error} onRetry={settings.reload} />
        {s && (
          <form class="grid" aria-label="seller settings" onSubmit={onSubmit} key={s.updated_at ?? 'new'}>
            <label class="wide">
              Legal name <input name="legal_name" defaultValue={s.legal_name ?? ''} placeholder="Acme Billing Ltd" />
            </label>
            <label>
              Street <input name="line1" defaultValue={s.address?.line1 ?? ''} />
            </label>
            <label>
              Address line 2 <input name="line2" defaultValue={s.address?.line2 ?? ''} />
            </label>
            <label>
              Postal code <input name="postal_code" defaultValue={s.address?.postal_code ?? ''} />
            </label>
            <label>
              City <input name="city" defaultValue={s.address?.city ?? ''} />
            </label>
            <label>
              Region <input name="region" defaultValue={s.address?.region ?? ''} />
            </label>
            <label>
              Country <input name="country" defaultValue={s.address?.country ?? ''} placeholder="US" maxLength={2} />
            </label>
            <label>
              Tax id kind <input name="tax_id_type" defaultValue={tax?.type ?? ''} placeholder="eu_vat, us_ein…" />
            </label>
            <label>
              Tax id <input name="tax_id_value" defaultValue={tax?.value ?? ''} placeholder="DE123456789" />
            </label>
            <label>
              Support email <input name="support_email" type="email" defaultValue={s.support_email ?? ''} />
            </label>
            <label>
              Emails come from <input name="email_from" type="email" defaultValue={s.email_from ?? ''} />
            </label>
            <label class="wide">
              Invoice footer <input name="invoice_footer" defaultValue={s.invoice_footer ?? ''} />
            </label>
            <button type="submit" class="primary" disabled={save.busy}>
              Save seller
            </button>
          </form>
        )}
        <ErrorBox error={save.error} />
        {saved && !save.error && (
          <div class="notice" role="status">
            Saved: the next documents and emails print it.
          </div>
        )}
      </Panel>
      {s && (
        <Panel title="Logo">
          {s.logo ? (
            <img src={s.logo} alt="the seller’s logo" data-testid="logo" style="max-height:48px;max-width:200px" />
          ) : (
            <p class="hint">No logo: documents start with their title.</p>
          )}
          <form class="inline" aria-label="logo" onSubmit={(e) => e.preventDefault()}>
            <label>
              PNG or JPEG, at most 256 KiB{' '}
              <input type="file" name="logo" accept="image/png,image/jpeg" onChange={(e) => void onLogo(e)} />
            </label>
            {s.logo && (
              <button type="button" disabled={save.busy} onClick={() => void save.run({ logo: null })}>
                Remove logo
              </button>
            )}
          </form>
          {logoError && (
            <div class="error" role="alert">
              <strong>{logoError}</strong>
            </div>
          )}
        </Panel>
      )}
    </>
  );
}
