import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import type { LegalAddress, TaxId } from '../tax/types.js';
import type { Logo, LogoMediaType } from './logo.js';

/**
 * Seller and branding settings (issue 48, docs/seller-settings.md): who issues the deployment's billing documents
 * and emails, as the operator set them. One row per deployment (migration 700); a field left unset (null) falls
 * back to its environment default in sellerProfile (./profile.ts), which is what every renderer reads.
 */
export interface SellerSettings {
  /** The registered name printed as the seller (default SELLER_NAME). */
  legal_name: string | null;
  address: LegalAddress | null;
  /** Replaced as a whole; empty: SELLER_TAX_ID, when set, is printed. */
  tax_ids: TaxId[];
  /** Where customers write with questions: printed on PDFs, Reply-To and shown in emails. */
  support_email: string | null;
  /** The footer line of every PDF page (default INVOICE_FOOTER). */
  invoice_footer: string | null;
  /** The address emails come from, shown with the seller's name (default MAIL_FROM). */
  email_from: string | null;
}

export const SELLER_SETTING_DEFAULTS: Readonly<SellerSettings> = Object.freeze({
  legal_name: null,
  address: null,
  tax_ids: [],
  support_email: null,
  invoice_footer: null,
  email_from: null,
});

export const SELLER_SETTING_NAMES = Object.keys(SELLER_SETTING_DEFAULTS) as (keyof SellerSettings)[];

/** The settings with their logo and when the operator last changed them (null: never). */
export interface StoredSellerSettings {
  settings: SellerSettings;
  logo: Logo | null;
  updatedAt: Date | null;
}

/** A change: the settings given (null clears one), and the logo when given (null removes it). */
export interface SellerSettingsChange {
  settings: Partial<SellerSettings>;
  logo?: Logo | null;
}

type Queryable = Pick<PgPool, 'query'> | PgClient;

interface Row {
  settings: Partial<SellerSettings>;
  logo: Buffer | null;
  logo_media_type: LogoMediaType | null;
  updated_at: Date;
}

export async function readSellerSettings(q: Queryable): Promise<StoredSellerSettings> {
  const r = await q.query<Row>('SELECT settings, logo, logo_media_type, updated_at FROM seller_settings WHERE id');
  return fromRow(r.rows[0]);
}

/** Sets the given settings (the others keep their value) in one statement; returns the settings in effect. */
export async function changeSellerSettings(q: Queryable, change: SellerSettingsChange): Promise<StoredSellerSettings> {
  const logoGiven = change.logo !== undefined;
  const r = await q.query<Row>(
    `INSERT INTO seller_settings (id, settings, logo, logo_media_type, updated_at) VALUES (true, $1::jsonb, $3, $4, now())
     ON CONFLICT (id) DO UPDATE SET
       settings = seller_settings.settings || EXCLUDED.settings,
       logo = CASE WHEN $2 THEN EXCLUDED.logo ELSE seller_settings.logo END,
       logo_media_type = CASE WHEN $2 THEN EXCLUDED.logo_media_type ELSE seller_settings.logo_media_type END,
       updated_at = now()
     RETURNING settings, logo, logo_media_type, updated_at`,
    [
      JSON.stringify(change.settings),
      logoGiven,
      change.logo ? Buffer.from(change.logo.data) : null,
      change.logo?.media_type ?? null,
    ],
  );
  return fromRow(r.rows[0]);
}

function fromRow(row: Row | undefined): StoredSellerSettings {
  const settings = { ...SELLER_SETTING_DEFAULTS, tax_ids: [] as TaxId[] };
  const stored = row?.settings ?? {};
  for (const k of SELLER_SETTING_NAMES)
    if (stored[k] !== undefined && stored[k] !== null) Object.assign(settings, { [k]: stored[k] });
  return {
    settings,
    logo: row?.logo && row.logo_media_type ? { media_type: row.logo_media_type, data: new Uint8Array(row.logo) } : null,
    updatedAt: row?.updated_at ?? null,
  };
}
