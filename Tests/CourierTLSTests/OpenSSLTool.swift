import Foundation
import Testing

/// The `openssl` command-line tool, used by the tests to build a throwaway PKI
/// and to run `openssl s_server` as an independent TLS peer.
enum OpenSSLTool {
    /// The path of the `openssl` executable found in `PATH`, if any.
    static let path: String? = {
        let searchPath = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in searchPath.split(separator: ":") {
            let candidate = "\(directory)/openssl"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }()

    /// Whether tests that need the tool can run.
    static var isAvailable: Bool { path != nil }

    /// The reason shown when those tests are skipped.
    static let missingReason: Comment = "the openssl command-line tool is not installed (not found in PATH)"

    /// Runs `openssl` with arguments in a directory and waits for it to finish.
    ///
    /// - Returns: what the tool wrote to stdout.
    /// - Throws: ``TestFailure`` if the tool is missing or exits with a non-zero status.
    @discardableResult
    static func run(_ arguments: [String], in directory: URL) throws -> Data {
        guard let path else { throw TestFailure("openssl not found") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.currentDirectoryURL = directory
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // The outputs are small (a certificate at most), so reading them to the
        // end before waiting cannot dead-lock on a full pipe for long.
        let stdout = output.fileHandleForReading.readDataToEndOfFile()
        let stderr = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestFailure("openssl \(arguments.joined(separator: " ")) failed with status "
                + "\(process.terminationStatus): \(String(decoding: stderr, as: UTF8.self))")
        }
        return stdout
    }
}

/// A failure in the test harness itself (not in the code under test).
struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
