import path from 'node:path';
import { allowing, bool, type Parser, url, type VarSpec } from './config-parsers.js';

/** The export destinations' settings (docs/exports.md), a part of the one Config (shared/config.ts). */
export interface ExportConfig {
  /** The directory `{type: "local"}` destinations write under (a destination names a path inside it); empty: off. */
  EXPORTS_LOCAL_ROOT: string;
  /** S3-compatible endpoint of `{type: "s3"}` destinations; empty: AWS's own for EXPORTS_S3_REGION. */
  EXPORTS_S3_ENDPOINT: string;
  EXPORTS_S3_REGION: string;
  /** Credentials of the S3 destinations (never logged, never shown by the API); empty: S3 exports are off. */
  EXPORTS_S3_ACCESS_KEY_ID: string;
  EXPORTS_S3_SECRET_ACCESS_KEY: string;
  /** Path-style addressing (`endpoint/bucket/key`): most S3-compatible servers want it. */
  EXPORTS_S3_FORCE_PATH_STYLE: boolean;
}

const absolutePath: Parser<string> = allowing('an absolute directory path', (raw) => {
  if (!path.isAbsolute(raw)) throw new Error(`must be an absolute path, got "${raw}"`);
  return path.resolve(raw);
});
const plain: Parser<string> = allowing('text', (raw) => raw.trim());

export const EXPORT_SPEC: { [K in keyof ExportConfig]: VarSpec<ExportConfig[K]> } = {
  EXPORTS_LOCAL_ROOT: {
    parse: absolutePath,
    default: '',
    describe:
      'directory that `{"type": "local"}` export destinations write under (docs/exports.md); empty: local destinations are refused',
  },
  EXPORTS_S3_ENDPOINT: {
    parse: url(['http', 'https']),
    default: '',
    describe: 'S3-compatible endpoint of `{"type": "s3"}` export destinations; empty: AWS S3 of EXPORTS_S3_REGION',
  },
  EXPORTS_S3_REGION: { parse: plain, default: 'us-east-1', describe: 'region the S3 export requests are signed for' },
  EXPORTS_S3_ACCESS_KEY_ID: {
    parse: plain,
    default: '',
    describe: 'access key id of the S3 export destinations; empty: S3 destinations are refused',
  },
  EXPORTS_S3_SECRET_ACCESS_KEY: {
    parse: plain,
    default: '',
    describe: 'secret access key of the S3 export destinations; never logged',
  },
  EXPORTS_S3_FORCE_PATH_STYLE: {
    parse: bool,
    default: true,
    describe:
      'address buckets by path (`endpoint/bucket/key`, what S3-compatible servers expect) instead of by host name',
  },
};
