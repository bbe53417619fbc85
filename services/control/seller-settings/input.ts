import type { RequestContext } from '../../../shared/http/context.js';
import { ValidationError, type FieldError } from '../../../shared/errors.js';
import { bodyValidator } from '../../../shared/http/validation.js';
import { UpdateSellerSettingsBody } from '../../../shared/api/seller-settings.js';
import type { SellerSettings, SellerSettingsChange } from '../../domain/seller/settings-store.js';
import { parseLogo } from '../../domain/seller/logo.js';
import { checkEmail, checkLegalAddress, checkTaxIds } from '../customers/input.js';

const updateBody = bodyValidator<UpdateSellerSettingsBody>(UpdateSellerSettingsBody);

/** A PATCH of the seller settings: the schema, then what it can't say (blank text, emails, the logo's bytes). */
export function parseSellerSettingsChange(ctx: RequestContext): SellerSettingsChange {
  const input = updateBody.parse(ctx.body);
  const errors: FieldError[] = [];
  const settings: Partial<SellerSettings> = {};
  const text = (field: 'legal_name' | 'invoice_footer') => {
    const v = input[field];
    if (v === undefined) return;
    if (v !== null && v.trim() === '') errors.push({ field, message: 'must not be blank (null clears it)' });
    settings[field] = v === null ? null : v.trim();
  };
  text('legal_name');
  text('invoice_footer');
  for (const field of ['support_email', 'email_from'] as const) {
    const v = input[field];
    if (v !== undefined) settings[field] = v === null ? null : checkEmail(v, errors, field);
  }
  if (input.address !== undefined)
    settings.address = input.address === null ? null : checkLegalAddress(input.address, errors);
  if (input.tax_ids !== undefined) settings.tax_ids = checkTaxIds(input.tax_ids, errors);
  const change: SellerSettingsChange = { settings };
  if (input.logo !== undefined) {
    const logo = input.logo === null ? null : parseLogo(input.logo);
    if (logo && 'problem' in logo) errors.push({ field: 'logo', message: logo.problem });
    else change.logo = logo;
  }
  if (errors.length) throw new ValidationError(errors);
  return change;
}
