import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where a client command's password comes from: `--password-stdin`, `--password-file PATH`,
/// `--password PASSWORD` or `CHATCAVE_PASSWORD`, at most one of the options.
///
/// A password given as `--password` can be read by every local user in `/proc/PID/cmdline`
/// (`ps`) and stays in the shell's history, so it is still accepted but warned about on
/// standard error. `--password-file` refuses a file that group or others may read, as ssh
/// refuses such a private key.
enum PasswordOptions {
    /// The options that take a value.
    static let valueOptions: Set<String> = ["password", "password-file"]
    /// The flags.
    static let flagOptions: Set<String> = ["password-stdin"]
    /// The longest password file read, in bytes.
    static let maximumFileSize = 4_096

    /// The password the options give, else `CHATCAVE_PASSWORD`, else `nil` (prompted for later).
    /// - Parameters:
    ///   - arguments: the parsed command line.
    ///   - environment: the environment.
    ///   - standardInput: reads one line of standard input without its newline; `nil` at its end.
    ///   - output: where the warning about `--password` goes.
    /// - Throws: ``CommandArguments/UsageError`` when several options are given, standard input
    ///   is empty, or the file is unreadable, empty or readable by others.
    static func password(from arguments: CommandArguments, environment: [String: String],
                         standardInput: () -> String?, output: CommandOutput) throws(CommandArguments.UsageError) -> String? {
        let given = [arguments.flags.contains("password-stdin") ? "--password-stdin" : nil,
                     arguments[option: "password-file"].map { _ in "--password-file" },
                     arguments[option: "password"].map { _ in "--password" }].compactMap { $0 }
        guard given.count <= 1 else {
            throw CommandArguments.UsageError(description: "give only one of \(given.joined(separator: ", "))")
        }
        if arguments.flags.contains("password-stdin") {
            guard let line = standardInput(), !line.isEmpty else {
                throw CommandArguments.UsageError(description: "--password-stdin: standard input has no password")
            }
            return line
        }
        if let path = arguments[option: "password-file"] {
            return try read(path)
        }
        if let password = arguments[option: "password"] {
            output.error("chatcave: warning: a password given with --password can be seen by other local users (ps) "
                         + "and stays in the shell history; use --password-stdin or --password-file")
            return password
        }
        return environment["CHATCAVE_PASSWORD"]
    }

    /// The first line of a password file that only its owner may read.
    private static func read(_ path: String) throws(CommandArguments.UsageError) -> String {
        func refuse(_ reason: String) -> CommandArguments.UsageError {
            CommandArguments.UsageError(description: "--password-file \(path): \(reason)")
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw refuse(String(cString: strerror(errno))) }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { throw refuse("not a regular file") }
        guard status.st_mode & 0o077 == 0 else {
            throw refuse("group or others may read or write it (mode \(String(status.st_mode & 0o777, radix: 8))); "
                         + "run chmod 600 on it")
        }
        guard let data = try? handle.read(upToCount: maximumFileSize + 1) ?? Data() else { throw refuse("cannot be read") }
        guard data.count <= maximumFileSize else { throw refuse("longer than \(maximumFileSize) bytes") }
        let line = String(String(decoding: data, as: UTF8.self).prefix { !$0.isNewline })
        guard !line.isEmpty else { throw refuse("the first line is empty") }
        return line
    }
}
