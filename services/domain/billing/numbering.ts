// Document numbering lives in services/domain/invoices/numbering.ts. This re-export only keeps deductions.ts
// compiling until its import is pointed there (another branch edits deductions.ts); delete it then.
export * from '../invoices/numbering.js';
