import type { ReadCache } from '../read-cache.js';
import { stringifyJson } from '../money/json.js';
import type { HttpReply } from './context.js';
import { reply } from './reply.js';
import { isPromise } from './pipeline.js';

/**
 * 200 with a resource read through its kind's cache (shared/read-cache.ts): the serialized answer is what is kept,
 * so a hit costs a map lookup and a socket write. `read` throws as the uncached read would (404 …): nothing kept.
 */
export function okFromCache(
  cache: ReadCache<string>,
  key: string,
  read: () => Promise<unknown>,
): HttpReply | Promise<HttpReply> {
  const text = cache.get(key, async () => stringifyJson(await read()));
  return isPromise(text) ? text.then((t) => reply.jsonText(200, t)) : reply.jsonText(200, text);
}
