import Type from 'typebox';
import { PrintableText } from './text.js';
import { LegalAddressSchema, TaxIds } from './tax.js';

/**
 * Seller and branding settings (docs/seller-settings.md): who issues the deployment's invoices, credit notes and
 * emails. Admin reads and changes them; a field that is null prints its environment default (SELLER_*,
 * INVOICE_FOOTER, MAIL_FROM).
 */
const Email = Type.String({ minLength: 3, maxLength: 254, description: 'an email address' });
const nullable = <T extends Type.TSchema>(t: T, description: string) => Type.Union([t, Type.Null()], { description });

/** A data: URL of a PNG or JPEG of at most 256 KiB (its base64 text is ≤ 349,560 characters, plus the prefix). */
const LogoDataUrl = Type.String({
  maxLength: 350_000,
  description:
    'data:image/png;base64,… or data:image/jpeg;base64,… — at most 256 KiB and 4000 pixels a side; checked to be the image it says',
});

const settingFields = {
  legal_name: nullable(
    PrintableText({ maxLength: 200, description: 'the seller’s registered name' }),
    'the seller’s registered name, printed as the issuer and in email subjects (null: SELLER_NAME)',
  ),
  address: nullable(LegalAddressSchema, 'the seller’s address printed on documents (null: SELLER_ADDRESS)'),
  tax_ids: { ...TaxIds, description: 'the seller’s tax ids printed on documents (empty: SELLER_TAX_ID, when set)' },
  support_email: nullable(Email, 'where customers write with questions: printed on PDFs, Reply-To of emails'),
  invoice_footer: nullable(
    PrintableText({ maxLength: 500, description: 'footer line' }),
    'the footer line of every PDF page (null: INVOICE_FOOTER)',
  ),
  email_from: nullable(Email, 'the address emails come from, with the seller’s name (null: MAIL_FROM)'),
  logo: nullable(LogoDataUrl, 'the logo printed on PDFs and shown in emails; null: none'),
};

export const SellerSettingsSchema = Type.Object(
  {
    ...settingFields,
    updated_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'when the operator last changed them; null: never (every field at its default)',
    }),
  },
  { additionalProperties: false },
);

export const UpdateSellerSettingsBody = Type.Object(
  {
    legal_name: Type.Optional(settingFields.legal_name),
    address: Type.Optional(settingFields.address),
    tax_ids: Type.Optional(settingFields.tax_ids),
    support_email: Type.Optional(settingFields.support_email),
    invoice_footer: Type.Optional(settingFields.invoice_footer),
    email_from: Type.Optional(settingFields.email_from),
    logo: Type.Optional(settingFields.logo),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateSellerSettingsBody = Type.Static<typeof UpdateSellerSettingsBody>;
