import type Type from 'typebox';
import type { CorrectionRow } from '../../domain/corrections/types.js';
import type { CorrectionSchema } from '../../../shared/api/corrections.js';

/** The API representation (shared/api/corrections.ts) of the domain's rows. */

export function toCorrection(r: CorrectionRow): Type.Static<typeof CorrectionSchema> {
  return {
    id: r.id,
    meter_id: r.meter_id,
    customer_id: r.customer_id,
    type: r.kind,
    ...(r.kind === 'cancel'
      ? { cancel: r.cancel_ids }
      : {
          replace: {
            start: r.replace_start!.toISOString(),
            end: r.replace_end!.toISOString(),
            record_ids: r.replacement_ids,
          },
        }),
    state: r.state,
    created_by: { user_id: r.created_by_user, client_id: r.created_by_client },
    created_at: r.created_at.toISOString(),
    applied_at: r.applied_at ? r.applied_at.toISOString() : null,
  };
}
