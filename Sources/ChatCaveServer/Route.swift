/// The routes of the ChatCave API, matched from a method and a path.
///
/// Path segments are percent-decoded; a trailing slash is ignored; `HEAD` matches what `GET`
/// matches (the server core sends no body for it).
enum Route: Equatable, Sendable {
    case root
    case signUp
    case listUsers
    case user(id: String)
    case signIn
    case signOut
    case listRooms
    case createRoom
    case room(id: String)
    case deleteRoom(id: String)
    case chatters(roomID: String)
    case join(roomID: String, userID: String)
    case leave(roomID: String, userID: String)
    case messages(roomID: String)
    case postMessage(roomID: String)
    /// A file of the web app other than its page, e.g. `app.js` (``WebApp/assets``).
    case asset(name: String)

    /// Whether the route is open to requests without credentials: `GET /`, the web app's files,
    /// sign-up and sign-in.
    var isOpen: Bool {
        switch self {
        case .root, .asset, .signUp, .signIn: true
        default: false
        }
    }

    /// Finds the route for a request.
    /// - Parameters:
    ///   - method: the method token.
    ///   - path: the percent-encoded path.
    /// - Returns: the route.
    /// - Throws: ``APIError`` 404 for an unknown path, 405 for a known path with another method,
    ///   400 for a path segment that is not valid percent-encoded UTF-8.
    static func match(method: String, path: String) throws(APIError) -> Route {
        var segments: [String] = []
        for raw in path.split(separator: "/", omittingEmptySubsequences: true) {
            segments.append(try decodeSegment(raw))
        }
        let verb = method == "HEAD" ? "GET" : method
        let table: [String: Route]
        switch segments.count {
        case 0:
            table = ["GET": .root]
        case 1 where segments[0] == "users":
            table = ["GET": .listUsers, "POST": .signUp]
        case 1 where segments[0] == "account":
            table = ["PUT": .signIn, "DELETE": .signOut]
        case 1 where segments[0] == "rooms":
            table = ["GET": .listRooms, "POST": .createRoom]
        case 1 where WebApp.assets[segments[0]] != nil:
            table = ["GET": .asset(name: segments[0])]
        case 2 where segments[0] == "users":
            table = ["GET": .user(id: segments[1])]
        case 2 where segments[0] == "rooms":
            table = ["GET": .room(id: segments[1]), "DELETE": .deleteRoom(id: segments[1])]
        case 3 where segments[0] == "rooms" && segments[2] == "chatters":
            table = ["GET": .chatters(roomID: segments[1])]
        case 3 where segments[0] == "rooms" && segments[2] == "messages":
            table = ["GET": .messages(roomID: segments[1]), "POST": .postMessage(roomID: segments[1])]
        case 4 where segments[0] == "rooms" && segments[2] == "chatters":
            table = ["PUT": .join(roomID: segments[1], userID: segments[3]),
                     "DELETE": .leave(roomID: segments[1], userID: segments[3])]
        default:
            throw .notFound("No route for \(method.prefix(20)) \(path.prefix(200))")
        }
        if let route = table[verb] { return route }
        var allowed = table.keys.sorted()
        if allowed.contains("GET") { allowed.append("HEAD") }
        throw .methodNotAllowed(String(method.prefix(20)), allowed: allowed)
    }

    private static func decodeSegment(_ raw: Substring) throws(APIError) -> String {
        guard raw.contains("%") else { return String(raw) }
        var bytes: [UInt8] = []
        var iterator = raw.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(FormDecoding.hexValue),
                  let low = iterator.next().flatMap(FormDecoding.hexValue) else {
                throw .badRequest("The path has a malformed percent escape")
            }
            bytes.append(high << 4 | low)
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .badRequest("The path does not decode to valid UTF-8")
        }
        return text
    }
}
