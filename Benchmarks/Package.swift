// swift-tools-version: 6.0
// Courier's benchmarks: a package of its own, so that the main package stays free of
// package dependencies. AsyncHTTPClient is here only as the peer Courier is measured against.
import Foundation
import PackageDescription

/// SwiftPM names a path dependency after its folder, so the Courier checkout's folder name
/// (`main` here, `courier` in a fresh clone) is the package name to use in `.product(...)`.
let courierPackage = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().lastPathComponent.lowercased()

let package = Package(
    name: "CourierBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // AsyncHTTPClient's TLS library, named to trust the HTTPS scenarios' run-time CA.
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.27.0"),
        // AsyncHTTPClient's byte buffers, for its streamed upload from a file.
        .package(url: "https://github.com/apple/swift-nio", from: "2.62.0"),
    ],
    targets: [
        // The benchmark driver: starts the servers, runs every scenario for every client, prints the table.
        .executableTarget(
            name: "courier-bench",
            dependencies: [
                .product(name: "Courier", package: courierPackage),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // A CourierTestServer in its own process, for scenarios that need server logic.
        .executableTarget(
            name: "bench-server",
            dependencies: [
                .product(name: "CourierTestServer", package: courierPackage),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
