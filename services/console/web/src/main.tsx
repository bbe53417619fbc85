import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { Console } from './app.js';
import { ApiClient } from './lib/api.js';
import { beginSignIn, exchangeCode, readCallback, type ConsoleSettings, type PendingSignIn } from './lib/oauth.js';
import { describeError } from './lib/problem.js';
import { SIGNED_OUT_BY_USER, TokenSession } from './lib/tokens.js';
import './styles.css';

const PENDING_KEY = 'meterline.console.sign-in';
const TOKEN_ENDPOINT = '/oauth/token';

type State =
  | { kind: 'starting' }
  | { kind: 'signed-in'; api: ApiClient; session: TokenSession }
  | { kind: 'signed-out'; message?: string };

function readSettings(): ConsoleSettings {
  const meta = document.querySelector<HTMLMetaElement>('meta[name="meterline-console"]');
  return JSON.parse(meta?.content ?? '') as ConsoleSettings;
}

/** Sends the browser to the authorization server; the PKCE verifier waits in sessionStorage (never the tokens). */
async function signIn(settings: ConsoleSettings): Promise<void> {
  const { url, pending } = await beginSignIn(
    settings,
    new URL('/oauth/authorize', location.origin).toString(),
    location.hash || '#/meters',
  );
  sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending));
  location.assign(url);
}

function Root() {
  const [state, setState] = useState<State>({ kind: 'starting' });
  const [settings] = useState(readSettings);
  useEffect(() => {
    void (async () => {
      const pendingText = sessionStorage.getItem(PENDING_KEY);
      const pending = pendingText ? (JSON.parse(pendingText) as PendingSignIn) : undefined;
      const callback = readCallback(location.search, pending, settings.issuer);
      if (callback.kind === 'none') return signIn(settings);
      sessionStorage.removeItem(PENDING_KEY);
      // The code is single use: take it out of the address bar (and the history) at once.
      history.replaceState(null, '', `${location.pathname}${pending?.returnTo ?? '#/meters'}`);
      if (callback.kind === 'error') return setState({ kind: 'signed-out', message: callback.message });
      try {
        const session = new TokenSession({
          tokenEndpoint: TOKEN_ENDPOINT,
          clientId: settings.client_id,
          onSignedOut: (reason) =>
            setState({
              kind: 'signed-out',
              message: reason === SIGNED_OUT_BY_USER ? 'You signed out.' : `You were signed out: ${reason}.`,
            }),
        });
        session.accept(await exchangeCode(TOKEN_ENDPOINT, settings, callback.code, pending!.verifier));
        setState({ kind: 'signed-in', session, api: new ApiClient(session) });
      } catch (err) {
        setState({ kind: 'signed-out', message: `Sign-in failed: ${describeError(err).message}` });
      }
    })().catch((err) => setState({ kind: 'signed-out', message: describeError(err).message }));
  }, []);

  if (state.kind === 'signed-in') {
    return (
      <Console api={state.api} session={state.session} onSignOut={() => void state.session.revoke('/oauth/revoke')} />
    );
  }
  return (
    <div class="signin">
      <h1>meterline console</h1>
      {state.kind === 'starting' && <p>Signing in…</p>}
      {state.kind === 'signed-out' && (
        <>
          {state.message && (
            <div class="error" role="alert">
              <strong>{state.message}</strong>
            </div>
          )}
          <button type="button" class="primary" onClick={() => void signIn(settings)}>
            Sign in
          </button>
        </>
      )}
    </div>
  );
}

render(<Root />, document.getElementById('app')!);
