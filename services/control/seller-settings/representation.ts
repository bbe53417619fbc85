import { logoDataUrl } from '../../domain/seller/logo.js';
import type { StoredSellerSettings } from '../../domain/seller/settings-store.js';

/** The API representation: every setting as the operator set it (null: its default), the logo as a data: URL. */
export function toSellerSettings(s: StoredSellerSettings) {
  return {
    ...s.settings,
    logo: s.logo ? logoDataUrl(s.logo) : null,
    updated_at: s.updatedAt?.toISOString() ?? null,
  };
}
