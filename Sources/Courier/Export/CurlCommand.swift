import Foundation

/// A request as a `curl` command line, for reproducing it by hand while debugging.
///
/// The command names the method (unless GET, or HEAD, which becomes `--head`), the URL, every
/// header field and the body, each argument quoted for a POSIX shell (single quotes). Unless
/// credentials are asked for, the value of every field that carries one
/// (``TransportRequest/isCredential(_:)``: `Authorization`, `Cookie`, API keys, what an
/// authenticator applied, the connection's default headers) becomes `<redacted>`, and so do a
/// password in the URL, secret-looking query values and secret-looking members of JSON and
/// form bodies. A body that is not UTF-8 text, holds a NUL byte or starts with `@`, is piped in with `printf`
/// and octal escapes (`printf '\001\002' | curl … --data-binary @-`), so every byte survives.
/// `Content-Length` is left to curl.
enum CurlCommand {
    /// The fields curl computes itself.
    private static let omittedFields: Set<String> = ["content-length", "transfer-encoding", "connection"]

    /// The command line for `request`.
    static func make(_ request: TransportRequest, includingCredentials: Bool) -> String {
        var arguments = ["curl", "--globoff"]
        switch request.method {
        case .get: break
        case .head: arguments.append("--head")
        default: arguments += ["--request", request.method.rawValue]
        }
        let headers = includingCredentials ? request.headers : Redaction.headers(of: request)
        for field in headers where !omittedFields.contains(field.name.lowercased()) {
            // `Name;` is curl's spelling of a field with an empty value (`Name:` would remove it).
            arguments += ["--header", field.value.isEmpty ? "\(field.name);" : "\(field.name): \(field.value)"]
        }
        var prefix = ""
        if !request.body.isEmpty {
            let body = includingCredentials ? request.body : BodyRedaction.redacted(request.body, contentType: request.headers["Content-Type"])
            // A text starting with `@` would name a file to curl: it is piped like binary.
            if let text = String(data: body, encoding: .utf8), !text.contains("\u{0}"), !text.hasPrefix("@") {
                arguments += ["--data-binary", text]
            } else {
                prefix = "printf " + quote(printfOctal(body)) + " | "
                arguments += ["--data-binary", "@-"]
            }
        }
        arguments.append(includingCredentials ? request.url.absoluteString : Redaction.url(request.url))
        return prefix + arguments.map(quote).joined(separator: " ")
    }

    /// `text` as one word of a POSIX shell: bare when it holds only safe characters, else in
    /// single quotes, each `'` written as `'\''`.
    static func quote(_ text: String) -> String {
        let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,")
        if !text.isEmpty, text.allSatisfy({ safe.contains($0) }) { return text }
        return "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// Every byte as a `printf` octal escape (`\ooo`), so that the format holds no `%` or `\`
    /// of its own.
    private static func printfOctal(_ data: Data) -> String {
        data.map { byte in
            let digits = String(byte, radix: 8)
            return "\\" + String(repeating: "0", count: 3 - digits.count) + digits
        }.joined()
    }
}

extension TransportRequest {
    /// This request as a `curl` command line (see ``HTTPConnection/curlCommand(for:includingCredentials:)``).
    /// - Parameter includingCredentials: whether credentials appear as they are; `false` (the
    ///   default) replaces them with `<redacted>`.
    /// - Returns: the command, quoted for a POSIX shell.
    public func curlCommand(includingCredentials: Bool = false) -> String {
        CurlCommand.make(self, includingCredentials: includingCredentials)
    }
}
