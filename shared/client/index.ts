/**
 * `meterline/client` (package.json `exports`): the typed API client, the usage emitter and the usage stream.
 *
 *   import { UsageEmitter } from 'meterline/client';
 *   const emitter = new UsageEmitter({ baseUrl: 'http://127.0.0.1:8080', token: process.env.METERLINE_TOKEN! });
 *   await emitter.emit({ meter_id: 'mtr_…', value: 1200, dimensions: { model: 'gpt-x' } });
 *   await emitter.close(); // flushes
 */
export {
  MeterlineClient,
  MeterlineError,
  usageQueryString,
  type ClientOptions,
  type UsageRecord,
  type AcceptedUsage,
  type BatchResult,
  type MeterUsage,
  type UsageQuery,
  type Meter,
  type NewMeter,
  type MeterScope,
  type MeterType,
  type Dimensions,
  type UsageWindow,
  type UsageGroup,
} from './api.js';
export { UsageEmitter, newClientRecordId, type EmitterOptions, type EmitterCounters } from './emitter.js';
export { UsageStream, StreamClosedError, type StreamOptions, type StreamAck, type StreamCounters } from './stream.js';
