/**
 * The seller's logo (issue 48): a PNG or JPEG the operator uploads as a `data:` URL, printed on invoice and credit
 * note PDFs and shown in emails. Checked here once, where it is accepted, so every renderer can trust it: the bytes
 * must be what the media type says (the file's own signature and header, not the declared type alone), within
 * LOGO_MAX_BYTES and LOGO_MAX_SIDE pixels a side.
 */
export const LOGO_MEDIA_TYPES = ['image/png', 'image/jpeg'] as const;
export type LogoMediaType = (typeof LOGO_MEDIA_TYPES)[number];

export interface Logo {
  media_type: LogoMediaType;
  data: Uint8Array;
}

/** 256 KiB: a logo, not a photograph; the base64 text of it stays well under the 1 MiB body limit. */
export const LOGO_MAX_BYTES = 256 * 1024;
export const LOGO_MAX_SIDE = 4000;

const DATA_URL = /^data:(image\/png|image\/jpeg);base64,([A-Za-z0-9+/]*={0,2})$/;
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** The logo a `data:image/png;base64,…` or `data:image/jpeg;base64,…` URL holds, or why it is refused. */
export function parseLogo(dataUrl: string): Logo | { problem: string } {
  const m = DATA_URL.exec(dataUrl);
  if (!m)
    return {
      problem: 'must be a data: URL of a PNG or JPEG image (data:image/png;base64,… or data:image/jpeg;base64,…)',
    };
  const media_type = m[1] as LogoMediaType;
  const data = new Uint8Array(Buffer.from(m[2]!, 'base64'));
  if (data.length === 0) return { problem: 'must not be empty' };
  if (data.length > LOGO_MAX_BYTES) return { problem: `must be at most ${LOGO_MAX_BYTES} bytes, got ${data.length}` };
  const size = media_type === 'image/png' ? pngSize(data) : jpegSize(data);
  if (!size) return { problem: `is not a valid ${media_type === 'image/png' ? 'PNG' : 'JPEG'} image` };
  if (size.width < 1 || size.height < 1 || size.width > LOGO_MAX_SIDE || size.height > LOGO_MAX_SIDE)
    return { problem: `must be 1–${LOGO_MAX_SIDE} pixels a side, got ${size.width}×${size.height}` };
  return { media_type, data };
}

/** The logo as the `data:` URL the API shows (the same text the operator sent). */
export function logoDataUrl(logo: Logo): string {
  return `data:${logo.media_type};base64,${Buffer.from(logo.data).toString('base64')}`;
}

/** A PNG's size from its first chunk, which must be IHDR; null when the bytes are not a PNG. */
function pngSize(b: Uint8Array): { width: number; height: number } | null {
  if (b.length < 33 || PNG_SIGNATURE.some((v, i) => b[i] !== v)) return null;
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  if (view.getUint32(8) !== 13 || String.fromCharCode(b[12]!, b[13]!, b[14]!, b[15]!) !== 'IHDR') return null;
  return { width: view.getUint32(16), height: view.getUint32(20) };
}

/** A JPEG's size from its first start-of-frame segment; null when the bytes are not a JPEG or have none. */
function jpegSize(b: Uint8Array): { width: number; height: number } | null {
  if (b.length < 4 || b[0] !== 0xff || b[1] !== 0xd8) return null;
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let i = 2;
  while (i + 4 <= b.length) {
    if (b[i] !== 0xff) return null;
    const marker = b[i + 1]!;
    if (marker === 0xff) {
      i++; // fill byte
      continue;
    }
    const length = view.getUint16(i + 2);
    if (length < 2) return null;
    // SOF0–SOF15, except DHT (C4), JPG (C8) and DAC (CC), carry the frame's size.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      if (i + 9 > b.length) return null;
      return { height: view.getUint16(i + 5), width: view.getUint16(i + 7) };
    }
    if (marker === 0xda || marker === 0xd9) return null; // scan data or end before any frame
    i += 2 + length;
  }
  return null;
}
