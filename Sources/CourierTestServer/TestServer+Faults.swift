import Foundation

extension TestServer {
    /// The `/fault/...` routes (reliability cases A–E).
    static func faultReply(_ name: Substring, _ request: Request) -> Reply {
        switch name {
        case "close-before-response":
            return .script([.close])
        case "close-mid-head":
            return .script([.send("HTTP/1.1 200 OK\r\nContent-Type: text/pl"), .close])
        case "close-mid-body":
            return .script([
                .send("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n"),
                .send(String(repeating: "x", count: 40)),
                .close,
            ])
        case "stall":
            return .script([.stall])
        case "stall-body":
            return .script([
                .send("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n"),
                .send(String(repeating: "x", count: 10)),
                .stall,
            ])
        case "short-length":
            return .script([.send("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n\r\nabc"), .stall])
        case "long-length":
            return .script([.send("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n\r\nabcdefgh")])
        case "trickle":
            return trickle(request)
        case "garbage-status":
            return .script([.send("HTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"), .close])
        case "chunked":
            let chunks = min(max(request.queryInt("chunks") ?? 3, 0), maxGeneratedBytes)
            let size = min(max(request.queryInt("size") ?? 5, 1), maxGeneratedBytes)
            guard chunks.multipliedReportingOverflow(by: size).partialValue <= maxGeneratedBytes else {
                return badRequest("chunks * size must be at most \(maxGeneratedBytes)")
            }
            return chunkedScript(body: bytesPattern(count: chunks * size), chunkSize: size, keepAlive: true)
        case "bad-chunk":
            return .script([
                .send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n"),
                .close,
            ])
        case "keepalive-then-close":
            return .response(status: 200, headers: [("Content-Type", "text/plain"), ("Connection", "close")], body: Data("bye".utf8))
        default:
            var json = JSONText()
            json.add("error", "no such fault")
            json.add("fault", String(name))
            return .json(status: 404, json.text)
        }
    }

    /// `/fault/trickle?bytes=N&interval=ms`: a length-framed body, one byte per interval.
    static func trickle(_ request: Request) -> Reply {
        let count = min(max(request.queryInt("bytes") ?? 10, 0), 100_000)
        let interval = min(max(request.queryInt("interval") ?? 10, 0), 60_000)
        var steps: [Step] = [.send("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: \(count)\r\n\r\n")]
        steps.reserveCapacity(count * 2 + 1)
        let body = bytesPattern(count: count)
        for index in 0..<count {
            steps.append(.pause(.milliseconds(interval)))
            steps.append(.send(body.subdata(in: index..<(index + 1))))
        }
        return .script(steps)
    }
}
