import { problemFromResponse } from './problem.js';

/** RFC 6749 §5.1 token response, as /oauth/token sends it. */
export interface TokenResponse {
  access_token: string;
  token_type: string;
  expires_in: number;
  refresh_token?: string;
  scope?: string;
}

type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

/** The reason `onSignedOut` gets when the user signed out (rather than the session ending on its own). */
export const SIGNED_OUT_BY_USER = 'you signed out';
type TimerHandle = ReturnType<typeof setTimeout>;

export interface TokenSessionOptions {
  tokenEndpoint: string;
  clientId: string;
  fetch?: Fetch;
  now?: () => number;
  setTimer?: (fn: () => void, ms: number) => TimerHandle;
  clearTimer?: (h: TimerHandle) => void;
  /** Called when the session ends: a refresh was refused (grant revoked or expired) or sign-out. */
  onSignedOut?: (reason: string) => void;
}

/** Refresh this long before expiry: a fifth of the lifetime, at most a minute. */
export function refreshMarginMs(lifetimeMs: number): number {
  return Math.min(60_000, Math.floor(lifetimeMs / 5));
}

/**
 * The console's tokens, in memory only (never localStorage: a page reload signs in again through the
 * authorization server's own session). The access token is refreshed before it expires — by a timer, and
 * on use if the timer was late (a sleeping laptop) — with one refresh in flight at a time, because refresh
 * tokens rotate: presenting a rotated one twice would revoke the whole grant.
 */
export class TokenSession {
  private access: string | undefined;
  private refreshToken: string | undefined;
  private expiresAt = 0;
  private refreshAt = 0;
  private granted: string[] = [];
  private inFlight: Promise<string> | undefined;
  private timer: TimerHandle | undefined;
  private readonly fetch: Fetch;
  private readonly now: () => number;

  constructor(private readonly opts: TokenSessionOptions) {
    this.fetch = opts.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.now = opts.now ?? Date.now;
  }

  get signedIn(): boolean {
    return this.access !== undefined;
  }

  get scopes(): readonly string[] {
    return this.granted;
  }

  hasScope(scope: 'read' | 'write' | 'admin'): boolean {
    const order = ['read', 'write', 'admin'];
    return this.granted.some((g) => order.indexOf(g) >= order.indexOf(scope));
  }

  /** Takes a token response (from the code exchange or a refresh) and schedules the next refresh. */
  accept(t: TokenResponse): void {
    if (!t.access_token || typeof t.expires_in !== 'number')
      throw new Error('The token response has no access_token or expires_in.');
    const lifetime = t.expires_in * 1000;
    this.access = t.access_token;
    if (t.refresh_token) this.refreshToken = t.refresh_token;
    if (t.scope !== undefined) this.granted = t.scope.split(' ').filter(Boolean);
    this.expiresAt = this.now() + lifetime;
    this.refreshAt = this.expiresAt - refreshMarginMs(lifetime);
    this.schedule();
  }

  /** A valid access token; refreshes first when it is about to expire. */
  async accessToken(): Promise<string> {
    if (!this.access) throw new Error('Not signed in.');
    if (this.now() >= this.refreshAt) return this.refresh();
    return this.access;
  }

  /** Exchanges the refresh token for new tokens; concurrent callers share one request. */
  refresh(): Promise<string> {
    this.inFlight ??= this.doRefresh().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  /** Ends the grant at the server (RFC 7009: a refresh token revokes every token of its grant), then forgets it. */
  async revoke(revocationEndpoint: string): Promise<void> {
    const token = this.refreshToken ?? this.access;
    if (token) {
      await this.fetch(revocationEndpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token, client_id: this.opts.clientId }).toString(),
      }).catch(() => undefined); // signing out locally must work even when the server is unreachable
    }
    this.signOut(SIGNED_OUT_BY_USER);
  }

  signOut(reason = 'signed out'): void {
    const wasSignedIn = this.signedIn;
    this.access = undefined;
    this.refreshToken = undefined;
    this.granted = [];
    this.expiresAt = this.refreshAt = 0;
    if (this.timer !== undefined) (this.opts.clearTimer ?? clearTimeout)(this.timer);
    this.timer = undefined;
    if (wasSignedIn) this.opts.onSignedOut?.(reason);
  }

  private async doRefresh(): Promise<string> {
    const refreshToken = this.refreshToken;
    if (!refreshToken) {
      this.signOut('the session expired');
      throw new Error('The session expired: sign in again.');
    }
    let res: Response;
    try {
      res = await this.fetch(this.opts.tokenEndpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: refreshToken,
          client_id: this.opts.clientId,
        }).toString(),
      });
    } catch (err) {
      // Network trouble: keep the tokens (the refresh token was not spent) and try again shortly.
      this.retrySoon();
      throw err;
    }
    if (!res.ok) {
      const problem = await problemFromResponse(res);
      if (res.status >= 500) {
        this.retrySoon();
        throw problem;
      }
      this.signOut(`the session ended: ${problem.detail}`);
      throw problem;
    }
    this.accept((await res.json()) as TokenResponse);
    return this.access!;
  }

  private schedule(): void {
    if (this.timer !== undefined) (this.opts.clearTimer ?? clearTimeout)(this.timer);
    const delay = Math.max(0, this.refreshAt - this.now());
    this.timer = (this.opts.setTimer ?? setTimeout)(() => {
      this.timer = undefined;
      this.refresh().catch(() => undefined); // failures end the session or re-arm a retry
    }, delay);
  }

  private retrySoon(): void {
    if (this.now() >= this.expiresAt) return;
    this.refreshAt = Math.min(this.expiresAt, this.now() + 5_000);
    this.schedule();
  }
}
