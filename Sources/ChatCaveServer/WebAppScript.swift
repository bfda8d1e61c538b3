/// The script of the web app, served at `/app.js` and loaded by the page as a module.
///
/// It is written as plain JavaScript with no library and no build step, in parts kept in the
/// extensions of this type (one file each) and joined in this order; as one module script they
/// share one scope. Rendering uses `textContent` only, so no text from the server is ever
/// parsed as HTML.
enum WebAppScript {
    /// The whole script: the parts in order.
    static let source = [client, interface, signIn, rooms, room, start].joined(separator: "\n\n") + "\n"
}
