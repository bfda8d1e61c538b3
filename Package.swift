// swift-tools-version: 6.0
// Courier: a fast, dependency-free HTTP connection framework for Swift on Linux.
// This manifest must never declare a package dependency; system C libraries
// come in through `.systemLibrary` targets, and system calls through the small C target CLinuxSystem.
import PackageDescription

let package = Package(
    name: "Courier",
    products: [
        .library(name: "Courier", targets: ["Courier"]),
        .library(name: "CourierTestServer", targets: ["CourierTestServer"]),
        .library(name: "ChatCave", targets: ["ChatCave"]),
        .library(name: "ChatCaveServer", targets: ["ChatCaveServer"]),
        .executable(name: "chatcave", targets: ["chatcave"]),
    ],
    targets: [
        // System C libraries (libssl-dev, zlib1g-dev, libsqlite3-dev).
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl",
                       providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib",
                       providers: [.apt(["zlib1g-dev"])]),
        // SQLite, the ChatCave server's store with a data directory.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),

        // The Linux calls Swift's Glibc module does not import: epoll, eventfd, accept4, pthread_setname_np.
        .target(name: "CLinuxSystem"),

        // Event loop (epoll) and non-blocking sockets, shared by the client and the servers.
        .target(name: "CourierWire", dependencies: ["CLinuxSystem"]),
        // HTTP/1.1 wire format: head parsing, body framing, chunked coding, gzip/deflate.
        .target(name: "CourierHTTP1", dependencies: ["CZlib"]),
        // HTTP/2 wire format: HPACK (RFC 7541) and frames (RFC 9113), pure values with no I/O.
        .target(name: "CourierHTTP2", exclude: ["DESIGN.md"]),
        // TLS client sessions over OpenSSL memory BIOs.
        .target(name: "CourierTLS", dependencies: ["COpenSSL"]),
        // The HTTP connection framework.
        .target(name: "Courier", dependencies: ["CourierWire", "CourierHTTP1", "CourierHTTP2", "CourierTLS"],
                exclude: ["Transport/Native/DESIGN.md"]),
        // A neutral HTTP/1.1 server core used by the test server and the ChatCave server.
        .target(name: "HTTPServerCore", dependencies: ["CourierWire", "CourierHTTP1"]),
        // A loopback HTTP server that misbehaves on demand, for Courier's tests and its users'.
        .target(name: "CourierTestServer", dependencies: ["HTTPServerCore"]),
        // The ChatCave chat client, layered on Courier.
        .target(name: "ChatCave", dependencies: ["Courier", "CourierHTTP1"]),
        // The reference ChatCave server, on the neutral server core, keeping its data in SQLite.
        .target(name: "ChatCaveServer", dependencies: ["HTTPServerCore", "CourierHTTP1", "CourierTLS", "CSQLite"]),
        // The command-line program's commands and demo, as a library so that tests can run them in-process.
        .target(name: "ChatCaveCLI", dependencies: ["Courier", "ChatCave", "ChatCaveServer"]),
        // The command-line program: serve, demo, and client commands.
        .executableTarget(name: "chatcave", dependencies: ["ChatCaveCLI"]),

        // Bounds how many tests run at once in the test process (a constructor sets Swift
        // Testing's parallelization width before the run starts; see the file's comment).
        .target(name: "CTestConcurrency", path: "Tests/CTestConcurrency"),
        // The test suites' one home for shared helpers: polling (`eventually`), blocking work on a
        // thread of its own, child processes and independent peers (nginx, squid, dante, openssl s_server), free ports.
        .target(name: "CourierTestSupport", dependencies: ["Courier", "CourierTestServer"], path: "Tests/CourierTestSupport"),
        .testTarget(name: "CourierWireTests", dependencies: ["CTestConcurrency", "CourierTestSupport", "CourierWire", "CLinuxSystem", "CourierTestServer"]),
        .testTarget(name: "CourierHTTP1Tests", dependencies: ["CTestConcurrency", "CourierTestSupport", "CourierHTTP1"]),
        .testTarget(name: "CourierHTTP2Tests", dependencies: ["CTestConcurrency", "CourierTestSupport", "CourierHTTP2", "CourierTestServer", "Courier"]),
        .testTarget(name: "CourierTLSTests", dependencies: ["CTestConcurrency", "CourierTestSupport", "CourierTLS", "CourierTestServer"]),
        .testTarget(name: "CourierTestServerTests", dependencies: ["CTestConcurrency", "CourierTestSupport", "CourierTestServer"]),
        .testTarget(name: "CourierTests", dependencies: ["CTestConcurrency", "CourierTestSupport", "Courier", "CourierHTTP2", "CourierTestServer", "COpenSSL"]),
        .testTarget(name: "ChatCaveTests", dependencies: ["CTestConcurrency", "CourierTestSupport", "Courier", "ChatCave", "ChatCaveServer", "ChatCaveCLI", "CourierTestServer"]),
        .testTarget(name: "ChatCaveServerTests", dependencies: ["CTestConcurrency", "CourierTestSupport", "ChatCaveServer", "CourierTestServer"]),
    ],
    swiftLanguageModes: [.v6]
)
