import { existsSync } from 'node:fs';
import type PDFDocument from 'pdfkit';
import type { TextOptions } from 'pdfkit';

/**
 * Unicode on the billing PDFs (issue 46): pdfkit's built-in Helvetica knows Latin-1 only, so the documents embed
 * Debian's Noto fonts (installed by the stack, infra/stack/fonts.ts) — Noto Sans for Latin, Greek, Cyrillic and
 * symbols (₹ €), Noto Sans Arabic, Noto Sans Hebrew and Noto Sans CJK — and print every text as runs, each in the
 * font of its script, so 株式会社, Ελλάδα, Москва, مرحبا and שלום print as written. pdfkit embeds each font as a
 * subset with a ToUnicode map: the text extracts back (pdftotext, test/fixtures/pdf.ts) as it was given.
 *
 * Right-to-left: fontkit shapes an Arabic or Hebrew word and lays its glyphs out right to left, but pdfkit has no
 * bidirectional algorithm, so a run of several right-to-left words would come out in reverse word order. A
 * right-to-left run is therefore drawn word by word in reverse order (the simple case of the Unicode bidi algorithm
 * that names and addresses need: words of one right-to-left script inside left-to-right text).
 */
type Script = 'latin' | 'arabic' | 'hebrew' | 'cjk';

const NOTO = '/usr/share/fonts/truetype/noto';
const CJK = '/usr/share/fonts/opentype/noto';
/** The font files per script, regular and bold (a .ttc names the face inside). */
export const FONT_FILES: Record<Script, { regular: [string, string?]; bold: [string, string?] }> = {
  latin: { regular: [`${NOTO}/NotoSans-Regular.ttf`], bold: [`${NOTO}/NotoSans-Bold.ttf`] },
  arabic: { regular: [`${NOTO}/NotoSansArabic-Regular.ttf`], bold: [`${NOTO}/NotoSansArabic-Bold.ttf`] },
  hebrew: { regular: [`${NOTO}/NotoSansHebrew-Regular.ttf`], bold: [`${NOTO}/NotoSansHebrew-Bold.ttf`] },
  cjk: {
    regular: [`${CJK}/NotoSansCJK-Regular.ttc`, 'NotoSansCJKjp-Regular'],
    bold: [`${CJK}/NotoSansCJK-Bold.ttc`, 'NotoSansCJKjp-Bold'],
  },
};

const fontName = (script: Script, bold: boolean) => `${script}-${bold ? 'bold' : 'regular'}`;

/**
 * Registers the fonts with a document. A script whose font is missing (a machine without fonts-noto-cjk) falls
 * back to Noto Sans, which draws its characters as empty boxes rather than failing the document; without Noto Sans
 * itself the stack was not installed — the error says what to install.
 */
export function registerFonts(doc: PDFDocument): void {
  if (!existsSync(FONT_FILES.latin.regular[0]))
    throw new Error(`${FONT_FILES.latin.regular[0]} is missing: install fonts-noto-core (meterline stack up does)`);
  for (const script of Object.keys(FONT_FILES) as Script[]) {
    for (const weight of ['regular', 'bold'] as const) {
      const [file, face] = existsSync(FONT_FILES[script][weight][0])
        ? FONT_FILES[script][weight]
        : FONT_FILES.latin[weight];
      doc.registerFont(fontName(script, weight === 'bold'), file, face);
    }
  }
}

/** The script a character needs a font for; null: a neutral (space, digit, ASCII punctuation) any font draws. */
function scriptOf(cp: number): Script | null {
  if (cp < 0x80) return /[A-Za-z]/.test(String.fromCodePoint(cp)) ? 'latin' : null;
  if ((cp >= 0x0590 && cp <= 0x05ff) || (cp >= 0xfb1d && cp <= 0xfb4f)) return 'hebrew';
  if (
    (cp >= 0x0600 && cp <= 0x06ff) ||
    (cp >= 0x0750 && cp <= 0x077f) ||
    (cp >= 0x08a0 && cp <= 0x08ff) ||
    (cp >= 0xfb50 && cp <= 0xfdff) ||
    (cp >= 0xfe70 && cp <= 0xfeff)
  )
    return 'arabic';
  if (
    (cp >= 0x1100 && cp <= 0x11ff) ||
    (cp >= 0x2e80 && cp <= 0x9fff) ||
    (cp >= 0xa960 && cp <= 0xa97f) ||
    (cp >= 0xac00 && cp <= 0xd7ff) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xffef) ||
    (cp >= 0x20000 && cp <= 0x3ffff)
  )
    return 'cjk';
  return 'latin';
}

const RTL = new Set<Script>(['arabic', 'hebrew']);

export interface FontRun {
  script: Script;
  text: string;
}

/**
 * A text as runs of one font each, in drawing order: neutrals go with the run before them (spaces between two
 * right-to-left words with that run); a right-to-left run's words are reversed, its spaces drawn in Noto Sans.
 */
export function fontRuns(text: string): FontRun[] {
  const logical: FontRun[] = [];
  for (const ch of text) {
    const script = scriptOf(ch.codePointAt(0)!);
    const last = logical[logical.length - 1];
    if (last && (script === null || script === last.script)) last.text += ch;
    else logical.push({ script: script ?? 'latin', text: ch });
  }
  return logical.flatMap((run) => {
    if (!RTL.has(run.script)) return [run];
    // Trailing neutrals ("שלום. ") stay after the run, in reading order.
    const m = /^(.*?[^\s\d.,:;!?()"'-])([\s\d.,:;!?()"'-]*)$/su.exec(run.text);
    const [core, tail] = m ? [m[1]!, m[2]!] : [run.text, ''];
    // The run's segments — letters of its script, and anything else (spaces, digits, quotes) — right to left:
    // fontkit lays out each letter segment's glyphs right to left itself; the others keep their order (a number
    // reads left to right inside right-to-left text) and are drawn in Noto Sans, which has their glyphs.
    const segments = [
      ...core.matchAll(/(\p{Script=Hebrew}|\p{Script=Arabic})+|[^\p{Script=Hebrew}\p{Script=Arabic}]+/gu),
    ]
      .map((x) => x[0])
      .reverse();
    const out: FontRun[] = segments.map((text) => ({
      script: /\p{Script=Hebrew}|\p{Script=Arabic}/u.test(text) ? run.script : 'latin',
      text,
    }));
    if (tail) out.push({ script: 'latin', text: tail });
    return out;
  });
}

/**
 * Draws a text at (x, y) — or where the document left off — in the fonts its scripts need, at the document's
 * current size and colour: one pdfkit `text` call per run, `continued` between them, so wrapping and alignment
 * treat it as one paragraph.
 */
export function drawText(
  doc: PDFDocument,
  text: string,
  bold: boolean,
  x?: number,
  y?: number,
  options: TextOptions = {},
): PDFDocument {
  const runs = fontRuns(text);
  if (runs.length === 0) return doc.font(fontName('latin', bold)).text('', x, y, options);
  // pdfkit misplaces `continued` runs of right-aligned or centred text: such a text (a heading, a label, a
  // footer: one line) is placed run by run at the offsets its measured widths give.
  if (
    runs.length > 1 &&
    (options.align === 'right' || options.align === 'center') &&
    x !== undefined &&
    y !== undefined
  ) {
    const widths = runs.map((r) => doc.font(fontName(r.script, bold)).widthOfString(r.text));
    const total = widths.reduce((a, b) => a + b, 0);
    const room = options.width ?? total;
    let at = x + (options.align === 'right' ? room - total : (room - total) / 2);
    runs.forEach((run, i) => {
      doc.font(fontName(run.script, bold)).text(run.text, at, y, { lineBreak: false });
      at += widths[i]!;
    });
    return doc;
  }
  runs.forEach((run, i) => {
    doc.font(fontName(run.script, bold));
    const opts = { ...options, continued: i < runs.length - 1 };
    if (i === 0) doc.text(run.text, x, y, opts);
    else doc.text(run.text, opts);
  });
  return doc;
}

/** The base font (Noto Sans), for measuring and for texts known to be Latin (amounts). */
export const baseFont = (bold = false) => fontName('latin', bold);

/** The width of a text at the document's current size, measured run by run in the fonts it is drawn with. */
export function textWidth(doc: PDFDocument, text: string, bold: boolean): number {
  return fontRuns(text).reduce((w, r) => w + doc.font(fontName(r.script, bold)).widthOfString(r.text), 0);
}
