/// The style sheet of the web app, served at `/app.css`.
///
/// One column that fills a phone's width and stays readable (at most 48 rem) on a desktop;
/// system fonts only; visible focus rings; colours that follow the system's light or dark mode.
enum WebAppStyle {
    /// The style sheet's text.
    static let source = #"""
        :root { color-scheme: light dark; --accent: #2f6f5e; --accent-text: #fff; --muted: #5b6470;
          --line: #d5d9de; --bg: #f6f7f8; --card: #fff; --error: #b3261e; --mine: #e4f2ed; }
        @media (prefers-color-scheme: dark) {
          :root { --accent: #7cc7b0; --accent-text: #0d1f1a; --muted: #a3acb6; --line: #3a4048;
            --bg: #16191d; --card: #1f2328; --error: #ff8a80; --mine: #1d3a32; }
        }
        * { box-sizing: border-box; }
        html { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; line-height: 1.4; }
        body { margin: 0; background: var(--bg); color: CanvasText; }
        [hidden] { display: none !important; }
        .skip { position: absolute; left: -999px; }
        .skip:focus { left: 0.5rem; top: 0.5rem; background: var(--card); padding: 0.5rem; z-index: 1; }
        .bar { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; justify-content: space-between;
          padding: 0.5rem 1rem; background: var(--accent); color: var(--accent-text); }
        .brand { margin: 0; font-size: 1.25rem; }
        .account { display: flex; gap: 0.75rem; align-items: center; flex-wrap: wrap; }
        main { max-width: 48rem; margin: 0 auto; padding: 1rem; }
        main:focus { outline: none; }
        h2 { margin: 0.25rem 0 0.75rem; font-size: 1.4rem; overflow-wrap: anywhere; }
        label { display: block; font-weight: 600; margin: 0.5rem 0 0.25rem; }
        input, textarea, button { font: inherit; }
        input, textarea { width: 100%; padding: 0.5rem; border: 1px solid var(--line); border-radius: 0.4rem;
          background: var(--card); color: inherit; }
        textarea { resize: vertical; min-height: 2.6rem; }
        button { cursor: pointer; padding: 0.5rem 0.9rem; border-radius: 0.4rem; border: 1px solid var(--accent);
          background: var(--accent); color: var(--accent-text); white-space: nowrap; }
        button.secondary { background: transparent; color: inherit; border-color: var(--line); }
        .bar button.secondary { color: var(--accent-text); border-color: currentColor; }
        button.danger { background: transparent; color: var(--error); border-color: var(--error); }
        button:disabled { opacity: 0.5; cursor: not-allowed; }
        :focus-visible { outline: 3px solid #f0a500; outline-offset: 2px; }
        .card { background: var(--card); border: 1px solid var(--line); border-radius: 0.6rem; padding: 1rem; max-width: 26rem; }
        .actions { display: flex; gap: 0.5rem; flex-wrap: wrap; margin-top: 0.5rem; }
        .row { display: flex; gap: 0.5rem; align-items: flex-start; }
        .row > input, .row > textarea { flex: 1; min-width: 0; }
        .error { color: var(--error); min-height: 1.4em; margin: 0.5rem 0; white-space: pre-wrap; }
        .error:empty { min-height: 0; margin: 0; }
        .note { color: var(--muted); font-size: 0.9rem; margin: 0.4rem 0; }
        .notice { background: var(--card); border-left: 4px solid var(--accent); padding: 0.5rem 0.75rem; }
        .rooms { list-style: none; padding: 0; margin: 1rem 0; display: grid; gap: 0.5rem; }
        .rooms li { display: flex; gap: 0.5rem; align-items: center; flex-wrap: wrap; background: var(--card);
          border: 1px solid var(--line); border-radius: 0.6rem; padding: 0.6rem 0.8rem; }
        .rooms a { font-weight: 600; flex: 1; min-width: 8rem; overflow-wrap: anywhere; color: inherit; }
        .rooms .count { color: var(--muted); font-size: 0.9rem; }
        .crumbs { margin-bottom: 0.25rem; }
        .crumbs a { color: inherit; }
        .room-head { display: flex; gap: 0.5rem; align-items: center; flex-wrap: wrap; }
        .room-head h2 { flex: 1; min-width: 10rem; }
        .chatters { color: var(--muted); margin: 0.25rem 0; overflow-wrap: anywhere; }
        .messages { list-style: none; margin: 0.5rem 0; padding: 0.5rem; background: var(--card); border: 1px solid var(--line);
          border-radius: 0.6rem; height: min(55vh, 30rem); overflow-y: auto; }
        .messages li { padding: 0.35rem 0.5rem; border-radius: 0.4rem; margin: 0.15rem 0; }
        .messages li.mine { background: var(--mine); }
        .messages li.event { color: var(--muted); font-style: italic; }
        .messages .author { font-weight: 600; margin-right: 0.4rem; overflow-wrap: anywhere; }
        .messages time { color: var(--muted); font-size: 0.8rem; margin-left: 0.4rem; }
        .messages .text { display: block; white-space: pre-wrap; overflow-wrap: anywhere; }
        @media (max-width: 30rem) {
          main { padding: 0.6rem; }
          .row { flex-direction: column; align-items: stretch; }
          .messages { height: 50vh; }
        }
        """#
}
