extension WebAppScript {
    /// Helpers of the views: finding and creating elements (text only through `textContent`),
/// showing one view and focusing it, showing errors, local times.
    static let interface = #"""
        // Small helpers for the views. User-supplied text only ever goes into textContent.

        const $ = (id) => document.getElementById(id);

        /** A new element with a class and a text (set as text, never parsed as HTML). */
        function element(tag, className, text) {
          const node = document.createElement(tag);
          if (className) node.className = className;
          if (text !== undefined && text !== null) node.textContent = String(text);
          return node;
        }

        const VIEWS = ['sign-in', 'rooms', 'room'];
        let currentView = null;

        /** Shows one view, hides the others, and moves the keyboard focus into it. */
        function showView(name, focusTarget) {
          currentView = name;
          $('loading').hidden = true;
          for (const view of VIEWS) $(`view-${view}`).hidden = view !== name;
          const signedIn = client.user !== null && name !== 'sign-in';
          $('account').hidden = !signedIn;
          $('account-name').textContent = client.user ? client.user.name : '';
          const target = focusTarget || document.querySelector(`#view-${name} h2`);
          if (target) {
            if (target.tagName === 'H2') target.tabIndex = -1;
            target.focus();
          }
        }

        /** Shows an error (an APIError, an Error or a text) in the paragraph `id`; null clears it. */
        function showError(id, error) {
          const paragraph = $(id);
          paragraph.textContent = error ? (error.message || String(error)) : '';
          delete paragraph.dataset.source;  // set again by the caller when a later success may clear it
        }

        /** Disables a button while `work` runs, and returns what it returns. */
        async function busy(button, work) {
          button.disabled = true;
          try {
            return await work();
          } finally {
            button.disabled = false;
          }
        }

        /** A message's time in the viewer's time zone: the time today, else date and time. */
        function localTime(iso) {
          const date = new Date(iso);
          if (Number.isNaN(date.getTime())) return '';
          const today = new Date();
          if (date.toDateString() === today.toDateString()) {
            return date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
          }
          return date.toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' });
        }
        """#
}
