/**
 * The fonts invoice PDFs embed (issue 46, services/workers/pdf-fonts.ts), from Debian like the servers: Noto Sans
 * (Latin, Greek, Cyrillic), Noto Sans Arabic and Hebrew (fonts-noto-core) and Noto Sans CJK (fonts-noto-cjk:
 * Chinese, Japanese, Korean). `meterline stack up` installs whichever is missing, so every name prints as written.
 */
import { existsSync } from 'node:fs';
import { ensureInstalled, type Installable } from './install.js';

/** Where Debian's packages put the files the PDF renderer loads (services/workers/pdf-fonts.ts FONT_FILES). */
export const FONT_PACKAGES: readonly { debianPackage: string; file: string }[] = [
  { debianPackage: 'fonts-noto-core', file: '/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf' },
  { debianPackage: 'fonts-noto-cjk', file: '/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc' },
];

function fontPackage(p: { debianPackage: string; file: string }): Installable {
  return {
    name: p.debianPackage,
    debianPackage: p.debianPackage,
    binaryDescription: p.file,
    command: () => (existsSync(p.file) ? { command: p.file, args: [] } : null),
  };
}

/** Installs the invoice fonts' packages that are missing (root with apt-get; otherwise a StackError says what to run). */
export async function ensureFonts(): Promise<void> {
  for (const p of FONT_PACKAGES) await ensureInstalled(fontPackage(p));
}
