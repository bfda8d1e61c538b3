// The names README.md's examples take from the prose around them, declared so that the
// examples compile (scripts/check-readme-examples.sh). Nothing here runs.
import ChatCave
import Courier
import Foundation

let connection = HTTPConnection(baseURL: URL(string: "https://chat.example.com/api")!)
// Never run: the examples only need it to type-check.
nonisolated(unsafe) var request = HTTPRequest(.get, "/rooms")
let url = URL(string: "https://chat.example.com")!
let logURL = URL(string: "https://logs.example.com")!
let tokenURL = URL(string: "https://auth.example.com/token")!
let secretsURL = URL(fileURLWithPath: "/tmp/secrets.json")
let cachesDirectory = URL(fileURLWithPath: "/tmp/caches")
let companyCA = Data("-----BEGIN CERTIFICATE-----\n…\n-----END CERTIFICATE-----\n".utf8)
let pin = Data(count: 32)
let keyPassphrase = "passphrase of the client key"

/// A model the examples decode.
struct Room: Decodable, Sendable {
    let id: Int
}

/// An event the examples encode.
struct Event: Encodable, Sendable {
    let name: String
}

let event = Event(name: "started")

/// An OAuth-style token response.
struct Token: Decodable, Sendable {
    let accessToken: String
}

/// Where the app keeps its password.
enum keychain {
    static let password = "secret"
}

/// The app's sign-in screen.
enum signInScreen {
    static func ask(rejected: Bool) async -> (name: String, password: String)? { nil }
    static func ask(name: String?, wrongPassword: Bool) async -> SignInCredentials? { nil }
}

let service = ChatCaveService(serverURL: URL(string: "http://127.0.0.1:3000")!)
let lobby = Chatroom(id: "1", name: "Lobby")
let id = connection.get("/rooms", onSuccess: { _ in })

let transport = NativeTransport()
let artifactURL = URL(string: "https://downloads.example.com/artifact.tar.gz")!
let file = FileHandle.nullDevice

/// The app's own sign-in state, for the authenticator example.
final class AppSession: @unchecked Sendable {
    var apiKey: String?
    let name = "alice"
    let password = "secret"
}

/// A sign-in answer.
struct SignIn: Decodable, Sendable {
    let apiKey: String
}
