/// The HTML of the web app's single page, served at `GET /` to browsers.
///
/// It holds the three views (sign-in, the room list, one room), each a `<section>` that
/// `/app.js` shows or hides, and no inline script or style (the content security policy forbids
/// them). Every control has a label; errors are announced through `role="alert"` paragraphs.
enum WebAppPage {
    /// The page's text.
    static let source = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>ChatCave</title>
        <link rel="icon" href="/favicon.svg" type="image/svg+xml">
        <link rel="stylesheet" href="/app.css">
        <script type="module" src="/app.js"></script>
        </head>
        <body>
        <a class="skip" href="#main">Skip to content</a>
        <header class="bar">
          <h1 class="brand">ChatCave</h1>
          <div id="account" class="account" hidden>
            <span>Signed in as <strong id="account-name"></strong></span>
            <button type="button" id="sign-out" class="secondary">Sign out</button>
          </div>
        </header>
        <main id="main" tabindex="-1">
          <p id="loading" class="note">Loading…</p>
          <noscript><p class="error">ChatCave's web app needs JavaScript.</p></noscript>

          <section id="view-sign-in" class="view" aria-labelledby="sign-in-title" hidden>
            <h2 id="sign-in-title">Sign in</h2>
            <p id="sign-in-note" class="notice" role="status" hidden></p>
            <form id="sign-in-form" class="card" novalidate>
              <label for="sign-in-name">User name</label>
              <input id="sign-in-name" name="name" autocomplete="username" autocapitalize="none" spellcheck="false" required>
              <label for="sign-in-password">Password</label>
              <input id="sign-in-password" name="password" type="password" autocomplete="current-password" required>
              <p id="sign-in-error" class="error" role="alert"></p>
              <div class="actions">
                <button type="submit" id="sign-in-button">Sign in</button>
                <button type="button" id="sign-up-button" class="secondary">Create account</button>
              </div>
            </form>
          </section>

          <section id="view-rooms" class="view" aria-labelledby="rooms-title" hidden>
            <h2 id="rooms-title">Rooms</h2>
            <form id="create-room-form" class="inline" novalidate>
              <label for="new-room-name">New room name</label>
              <div class="row">
                <input id="new-room-name" name="room" autocomplete="off" required>
                <button type="submit" id="create-room-button">Create room</button>
              </div>
            </form>
            <p id="rooms-error" class="error" role="alert"></p>
            <ul id="room-list" class="rooms" aria-label="Rooms"></ul>
            <p id="rooms-empty" class="note" hidden>No rooms yet: create the first one.</p>
            <button type="button" id="refresh-rooms" class="secondary">Refresh the list</button>
          </section>

          <section id="view-room" class="view" aria-labelledby="room-title" hidden>
            <nav class="crumbs"><a href="#/rooms" id="back-to-rooms">← All rooms</a></nav>
            <div class="room-head">
              <h2 id="room-title"></h2>
              <button type="button" id="join-button">Join room</button>
              <button type="button" id="leave-button" class="secondary">Leave room</button>
            </div>
            <p class="chatters">In this room: <span id="chatter-list"></span></p>
            <p id="room-error" class="error" role="alert"></p>
            <ol id="message-list" class="messages" aria-label="Messages" aria-live="polite" tabindex="0"></ol>
            <form id="post-form" class="composer" novalidate>
              <label for="message-text">Message</label>
              <div class="row">
                <textarea id="message-text" name="text" rows="2" autocomplete="off"></textarea>
                <button type="submit" id="send-button">Send</button>
              </div>
              <p class="note" id="post-hint">Enter sends; Shift+Enter starts a new line.</p>
            </form>
          </section>
        </main>
        </body>
        </html>
        """#
}
