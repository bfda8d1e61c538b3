/// The built-in web app: a single page (`/`), its script (`/app.js`), style sheet (`/app.css`)
/// and icon (`/favicon.svg`), compiled into the binary as Swift string literals, so that a
/// copied `chatcave` binary serves the whole app with no files beside it.
///
/// The page is served at `GET /` to clients that prefer HTML (``APIRequest/prefersHTML``); the
/// others are open routes (``Route/asset(name:)``). The app talks to the JSON API with
/// `X-Magic-Auth` from JavaScript, keeps the key in `sessionStorage`, and uses no cookies.
enum WebApp {
    /// Fields ``ChatCaveAPI`` sends with every response, of the API and of the web app: a
    /// content security policy that allows only this origin's files (no inline script or style,
    /// no framing), no MIME sniffing, and no `Referer` to other sites.
    static let securityHeaders: [(name: String, value: String)] = [
        (name: "Content-Security-Policy", value: "default-src 'self'; frame-ancestors 'none'"),
        (name: "X-Content-Type-Options", value: "nosniff"),
        (name: "Referrer-Policy", value: "no-referrer"),
    ]

    /// The page at `/`. It varies with `Accept`, since JSON clients get the API description there.
    static let page = WebAsset(path: "/", contentType: "text/html; charset=utf-8", text: WebAppPage.source,
                               extraHeaders: [(name: "Vary", value: "Accept")])
    /// The script at `/app.js`.
    static let script = WebAsset(path: "/app.js", contentType: "text/javascript; charset=utf-8", text: WebAppScript.source)
    /// The style sheet at `/app.css`.
    static let style = WebAsset(path: "/app.css", contentType: "text/css; charset=utf-8", text: WebAppStyle.source)
    /// The icon at `/favicon.svg`.
    static let icon = WebAsset(path: "/favicon.svg", contentType: "image/svg+xml", text: iconSource)

    /// A speech bubble in the app's accent colour.
    static let iconSource = """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><path fill="#2f6f5e" \
        d="M6 4h20a4 4 0 0 1 4 4v12a4 4 0 0 1-4 4H14l-7 6v-6H6a4 4 0 0 1-4-4V8a4 4 0 0 1 4-4z"/></svg>
        """

    /// The assets served at a path of their own, by file name (`app.js`, `app.css`, `favicon.svg`).
    static let assets: [String: WebAsset] = Dictionary(uniqueKeysWithValues: [script, style, icon].map {
        (String($0.path.dropFirst()), $0)
    })
}
