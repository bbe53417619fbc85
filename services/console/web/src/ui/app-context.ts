import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { ApiClient } from '../lib/api.js';
import type { TokenSession } from '../lib/tokens.js';

export interface AppContext {
  api: ApiClient;
  session: TokenSession;
  /** Goes to a console route, e.g. "/meters/mtr_…" (hash routing: the server serves one page). */
  navigate(route: string): void;
}

export const App = createContext<AppContext | null>(null);

export function useApp(): AppContext & { canWrite: boolean; isAdmin: boolean } {
  const ctx = useContext(App);
  if (!ctx) throw new Error('useApp outside the app');
  return { ...ctx, canWrite: ctx.session.hasScope('write'), isAdmin: ctx.session.hasScope('admin') };
}
