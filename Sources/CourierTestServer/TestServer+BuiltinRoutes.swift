import Foundation

extension TestServer {
    /// The body byte at `index` of `/bytes/<n>` and `/fault/chunked` responses: `index % 256`.
    ///
    /// - Parameter count: How many bytes.
    /// - Returns: `count` bytes of the pattern `0, 1, 2, ..., 255, 0, 1, ...`.
    public static func bytesPattern(count: Int) -> Data {
        var data = Data(count: max(count, 0))
        data.withUnsafeMutableBytes { raw in
            for index in raw.indices { raw[index] = UInt8(truncatingIfNeeded: index) }
        }
        return data
    }

    /// The largest `/bytes/<n>` and `/fault/chunked` body served (256 MiB).
    static let maxGeneratedBytes = 256 << 20

    /// The built-in routes: `/echo`, `/status`, `/delay`, `/bytes`, `/ranged` (see
    /// ``ranged(_:_:)``), the faults, `/cookies…`
    /// (see ``cookiesReply(_:)``) and `/redirect-to`.
    static func builtinReply(for request: Request) -> Reply {
        let path = request.path
        if path == "/echo" || path.hasPrefix("/echo/") { return echo(request) }
        if let code = path.dropPrefix("/status/") { return status(code) }
        if let milliseconds = path.dropPrefix("/delay/") { return delay(milliseconds) }
        if let count = path.dropPrefix("/bytes/") { return bytes(count, request) }
        if let count = path.dropPrefix("/ranged/") { return ranged(count, request) }
        if let fault = path.dropPrefix("/fault/") { return faultReply(fault, request) }
        if path == "/cookies" || path.hasPrefix("/cookies/") { return cookiesReply(request) }
        if path == "/redirect-to" { return redirectTo(request) }
        var json = JSONText()
        json.add("error", "no route")
        json.add("path", path)
        return .json(status: 404, json.text)
    }

    static func echo(_ request: Request) -> Reply {
        let headers = request.fields.map { "[\(JSONText.quote($0.name)), \(JSONText.quote($0.value))]" }
        var json = JSONText()
        json.add("method", request.method)
        json.add("path", request.path)
        json.add("query", request.query)
        json.addRaw("headers", "[" + headers.joined(separator: ", ") + "]")
        json.add("body", String(decoding: request.body, as: UTF8.self))
        json.add("bodyLength", request.body.count)
        json.add("connection", request.connectionNumber)
        json.add("request", request.requestNumber)
        var status = 200
        if let wanted = request.queryInt("status"), (100...999).contains(wanted) { status = wanted }
        return .json(status: status, json.text)
    }

    static func status(_ text: Substring) -> Reply {
        guard let code = Int(text), (100...999).contains(code) else {
            return badRequest("status must be a number from 100 to 999, got \"\(text)\"")
        }
        if (100...199).contains(code) || code == 204 || code == 304 {
            return .response(status: code)
        }
        return .json(status: code, JSONText.object("status", code))
    }

    static func delay(_ text: Substring) -> Reply {
        guard let milliseconds = Int(text), milliseconds >= 0 else {
            return badRequest("delay must be a non-negative number of milliseconds, got \"\(text)\"")
        }
        return .delayed(.milliseconds(milliseconds), .json(JSONText.object("delayed", milliseconds)))
    }

    static func bytes(_ text: Substring, _ request: Request) -> Reply {
        guard let count = Int(text), (0...maxGeneratedBytes).contains(count) else {
            return badRequest("byte count must be 0...\(maxGeneratedBytes), got \"\(text)\"")
        }
        let body = bytesPattern(count: count)
        guard request.queryValue("chunked") == "1" else {
            return .response(status: 200, headers: [("Content-Type", "application/octet-stream")], body: body)
        }
        let chunkSize = max(request.queryInt("chunk") ?? 1024, 1)
        return chunkedScript(body: body, chunkSize: chunkSize, keepAlive: true)
    }

    /// A complete chunked response as one raw send.
    static func chunkedScript(body: Data, chunkSize: Int, keepAlive: Bool) -> Reply {
        var wire = Data("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n".utf8)
        if !keepAlive { wire.append(contentsOf: "Connection: close\r\n".utf8) }
        wire.append(contentsOf: "\r\n".utf8)
        var offset = 0
        while offset < body.count {
            let end = min(offset + chunkSize, body.count)
            wire.append(contentsOf: (String(end - offset, radix: 16) + "\r\n").utf8)
            wire.append(body[offset..<end])
            wire.append(contentsOf: "\r\n".utf8)
            offset = end
        }
        wire.append(contentsOf: "0\r\n\r\n".utf8)
        return .script(keepAlive ? [.send(wire)] : [.send(wire), .close])
    }

    static func badRequest(_ message: String) -> Reply {
        var json = JSONText()
        json.add("error", message)
        return .json(status: 400, json.text)
    }
}

extension String {
    /// The rest of the string after `prefix`, or `nil` when it does not start with it.
    func dropPrefix(_ prefix: String) -> Substring? {
        hasPrefix(prefix) ? self.dropFirst(prefix.count) : nil
    }
}
