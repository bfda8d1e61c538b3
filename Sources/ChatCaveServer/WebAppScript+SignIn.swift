extension WebAppScript {
    /// The sign-in view (sign in, create an account, sign out). It also comes up when a request is
/// held after a 401, and returns to the previous view once the held requests are sent again.
    static let signIn = #"""
        // The sign-in view: sign in or create an account. It also comes up when a request gets 401;
        // then signing in sends the held requests again and returns to where the user was.

        let viewBeforeSignIn = null;

        function showSignIn(note) {
          $('sign-in-note').textContent = note || '';
          $('sign-in-note').hidden = !note;
          showError('sign-in-error', null);
          const name = $('sign-in-name');
          if (client.user && !name.value) name.value = client.user.name;
          showView('sign-in', name.value ? $('sign-in-password') : name);
        }

        /** Called when a request was held for a sign-in (the key was refused). */
        function signInNeeded(count) {
          if (currentView !== 'sign-in') viewBeforeSignIn = currentView;
          const requests = count === 1 ? '1 request' : `${count} requests`;
          showSignIn(`Your session has ended. Sign in again: ${requests} waiting will then be sent.`);
        }

        async function authenticate(creating) {
          const name = $('sign-in-name').value.trim();
          const password = $('sign-in-password').value;
          if (!name || !password) {
            showError('sign-in-error', 'Enter a user name and a password.');
            return;
          }
          const button = creating ? $('sign-up-button') : $('sign-in-button');
          try {
            const user = await busy(button, () => (creating ? api.signUp(name, password) : api.signIn(name, password)));
            $('sign-in-password').value = '';
            const previous = client.user ? client.user.id : null;
            const resumed = client.isHolding() && previous === user.id;
            client.signedIn(user);
            if (resumed && viewBeforeSignIn && viewBeforeSignIn !== 'sign-in') {
              showView(viewBeforeSignIn);  // the held requests finish what that view was doing
            } else {
              leaveRoom();
              if (location.hash === '#/rooms') route(); else location.hash = '#/rooms';
            }
            viewBeforeSignIn = null;
          } catch (error) {
            showError('sign-in-error', error);
          }
        }

        async function signOut() {
          try {
            await busy($('sign-out'), () => api.signOut());
          } catch (error) {
            // The key may already be revoked: the user is signed out here either way.
          }
          leaveRoom();
          client.forget();
          $('sign-in-name').value = '';
          history.replaceState(null, '', '#/');
          showSignIn('You have signed out.');
        }

        function bindSignIn() {
          $('sign-in-form').addEventListener('submit', (event) => {
            event.preventDefault();
            authenticate(false);
          });
          $('sign-up-button').addEventListener('click', () => authenticate(true));
          $('sign-out').addEventListener('click', signOut);
        }
        """#
}
