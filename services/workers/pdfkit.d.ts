// pdfkit 0.20 ships no type declarations; this is the small part of its API meterline uses
// (documented at https://pdfkit.org/docs/). Kept local rather than adding @types/pdfkit.
declare module 'pdfkit' {
  interface PDFDocumentOptions {
    size?: string | [number, number];
    margin?: number;
    compress?: boolean;
    autoFirstPage?: boolean;
    bufferPages?: boolean;
    lang?: string;
    info?: {
      Title?: string;
      Author?: string;
      Subject?: string;
      Creator?: string;
      Producer?: string;
      CreationDate?: Date;
      ModDate?: Date;
    };
  }
  export interface TextOptions {
    width?: number;
    height?: number;
    align?: 'left' | 'center' | 'right' | 'justify';
    lineBreak?: boolean;
    continued?: boolean;
    lineGap?: number;
    characterSpacing?: number;
  }
  interface PDFPage {
    width: number;
    height: number;
    margins: { top: number; left: number; bottom: number; right: number };
  }
  class PDFDocument {
    constructor(options?: PDFDocumentOptions);
    x: number;
    y: number;
    page: PDFPage;
    font(name: string, size?: number): this;
    registerFont(name: string, src: string, family?: string): this;
    fontSize(size: number): this;
    fillColor(color: string, opacity?: number): this;
    strokeColor(color: string, opacity?: number): this;
    lineWidth(width: number): this;
    moveTo(x: number, y: number): this;
    lineTo(x: number, y: number): this;
    stroke(color?: string): this;
    text(text: string, options?: TextOptions): this;
    text(text: string, x?: number, y?: number, options?: TextOptions): this;
    moveDown(lines?: number): this;
    heightOfString(text: string, options?: TextOptions): number;
    widthOfString(text: string, options?: TextOptions): number;
    /** A PNG or JPEG at (x, y), scaled to fit within `fit` (width, height) keeping its proportions. */
    image(
      src: Buffer,
      x?: number,
      y?: number,
      options?: { fit?: [number, number]; width?: number; height?: number },
    ): this;
    addPage(options?: PDFDocumentOptions): this;
    /** With bufferPages: the pages laid out so far, and going back to one of them. */
    bufferedPageRange(): { start: number; count: number };
    switchToPage(n: number): PDFPage;
    end(): void;
    on(event: 'data', listener: (chunk: Buffer) => void): this;
    on(event: 'end', listener: () => void): this;
    on(event: 'error', listener: (err: Error) => void): this;
  }
  export default PDFDocument;
}
