extension WebAppScript {
    /// The API client: `request()` adds `X-Magic-Auth` and `Accept: application/json`, sends no
/// cookies or browser credentials, turns `{"error": …}` bodies into error texts, and holds every
/// request answered 401 until the user signs in again, then sends each held request once more.
    static let client = #"""
        // The API client: every request of the app goes through request(), which adds the key,
        // reads {"error": …} texts, and holds requests answered 401 until the user signs in again.

        const SESSION_KEY = 'chatcave.session';

        /** A refusal of the server (status and its error text), or a network failure (status 0). */
        class APIError extends Error {
          constructor(status, message, dropped = false) {
            super(message);
            this.status = status;
            this.dropped = dropped; // a held request that was not sent, because someone else signed in
          }
        }

        const client = {
          user: null,          // {id, name, apiKey} of the signed-in user, or null
          held: [],            // requests answered 401, waiting for a sign-in to be sent again
          onHold: () => {},    // called with the number of held requests when one more is held

          /** Reads the session this tab kept in sessionStorage. */
          restore() {
            try {
              const saved = JSON.parse(sessionStorage.getItem(SESSION_KEY) || 'null');
              if (saved && typeof saved.id === 'string' && typeof saved.name === 'string' && typeof saved.apiKey === 'string') {
                this.user = saved;
              }
            } catch (error) {
              sessionStorage.removeItem(SESSION_KEY);
            }
          },

          /** Whether requests are held until a sign-in. */
          isHolding() {
            return this.held.length > 0;
          },

          /**
           * Keeps the user who just signed in, then sends every held request once more, each once,
           * with the new key. Requests held for another user are dropped, never sent as this one.
           */
          signedIn(user) {
            this.user = { id: user.id, name: user.name, apiKey: user.apiKey };
            sessionStorage.setItem(SESSION_KEY, JSON.stringify(this.user));
            for (const call of this.held.splice(0)) {
              if (call.userID === user.id) {
                send(call);
              } else {
                call.reject(new APIError(401, 'A request of another user was not sent', true));
              }
            }
          },

          /** Forgets the user and drops every held request. */
          forget() {
            this.user = null;
            sessionStorage.removeItem(SESSION_KEY);
            for (const call of this.held.splice(0)) call.reject(new APIError(401, 'Signed out', true));
          },
        };

        /**
         * Sends one request to the API and resolves with the decoded JSON body (null when empty).
         * options.open: sent without the key (sign-up, sign-in); options.hold: false to fail at once
         * on 401 instead of waiting for a sign-in; options.manualRedirect: a 3xx answer is success.
         */
        function request(method, path, body, options = {}) {
          return new Promise((resolve, reject) => {
            send({
              method, path, body, resolve, reject,
              open: options.open === true,
              hold: options.hold !== false,
              manualRedirect: options.manualRedirect === true,
              userID: client.user ? client.user.id : null,
            });
          });
        }

        async function send(call) {
          const headers = { 'Accept': 'application/json' };
          const key = client.user ? client.user.apiKey : null;
          if (!call.open && key) headers['X-Magic-Auth'] = key;
          if (call.body !== undefined) headers['Content-Type'] = 'application/json';
          let response;
          try {
            response = await fetch(call.path, {
              method: call.method,
              headers,
              body: call.body === undefined ? undefined : JSON.stringify(call.body),
              credentials: 'omit',  // no cookies, no cached Basic credentials, no browser sign-in prompt
              cache: 'no-store',
              redirect: call.manualRedirect ? 'manual' : 'follow',
            });
          } catch (error) {
            call.reject(new APIError(0, 'The server cannot be reached. Check that it is running, then try again.'));
            return;
          }
          if (response.status === 401 && !call.open && call.hold) {
            const current = client.user ? client.user.apiKey : null;
            if (current && current !== key && !client.isHolding()) {
              send(call);  // sent with a key replaced meanwhile by a sign-in: once more with the new one
              return;
            }
            client.held.push(call);
            client.onHold(client.held.length);
            return;
          }
          if (response.type === 'opaqueredirect') {
            call.resolve(null);
            return;
          }
          const text = await response.text().catch(() => '');
          let value = null;
          try {
            value = text ? JSON.parse(text) : null;
          } catch (error) {
            value = null;
          }
          if (response.ok) {
            call.resolve(value);
          } else {
            const message = value && typeof value.error === 'string' && value.error ? value.error : statusText(response.status);
            call.reject(new APIError(response.status, message));
          }
        }

        function statusText(status) {
          switch (status) {
            case 401: return 'You are not signed in, or your session has ended.';
            case 403: return 'That is not allowed.';
            case 404: return 'That does not exist (any more).';
            case 413: return 'That is too long for the server.';
            case 429: return 'Too many attempts; wait a moment and try again.';
            default: return status >= 500 ? `The server had a problem (${status}); try again.` : `The request failed (${status}).`;
          }
        }

        const segment = encodeURIComponent;

        /** The routes of the ChatCave API that the app uses. */
        const api = {
          signUp: (name, password) => request('POST', '/users', { user: { name, password } }, { open: true }),
          signIn: (name, password) => request('PUT', '/account', { user: { name, password } }, { open: true }),
          signOut: () => request('DELETE', '/account', undefined, { hold: false }),
          rooms: () => request('GET', '/rooms'),
          room: (id) => request('GET', `/rooms/${segment(id)}`),
          chatters: (id) => request('GET', `/rooms/${segment(id)}/chatters`),
          createRoom: (name) => request('POST', '/rooms', { room: { name } }),
          deleteRoom: (id) => request('DELETE', `/rooms/${segment(id)}`, undefined, { manualRedirect: true }),
          join: (id) => request('PUT', `/rooms/${segment(id)}/chatters/${segment(client.user.id)}`),
          leave: (id) => request('DELETE', `/rooms/${segment(id)}/chatters/${segment(client.user.id)}`),
          messages: (id, since) => request('GET', `/rooms/${segment(id)}/messages${since ? `?since=${segment(since)}` : ''}`),
          post: (id, text) => request('POST', `/rooms/${segment(id)}/messages`, { message: { text } }),
        };
        """#
}
