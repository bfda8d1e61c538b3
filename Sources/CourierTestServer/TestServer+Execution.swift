import Foundation
import HTTPServerCore

extension TestServer {
    /// Routes a request: custom routes first, then the built-in ones; then performs the reply.
    static func serve(_ request: HTTPServerRequest, _ responder: HTTPServerResponder, routes: RouteTable) {
        let testRequest = Request(request)
        let reply: Reply
        if let handler = routes.handler(for: testRequest.path) {
            reply = handler(testRequest)
        } else {
            reply = builtinReply(for: testRequest)
        }
        perform(reply, keepAlive: request.keepAlive, responder: responder)
    }

    static func perform(_ reply: Reply, keepAlive: Bool, responder: HTTPServerResponder) {
        switch reply {
        case .response(let status, let headers, let body):
            responder.respond(status: status, headers: headers.map { (name: $0.0, value: $0.1) }, body: [UInt8](body))
        case .script(let steps):
            run(steps[...], keepAlive: keepAlive, responder: responder)
        case .delayed(let delay, let inner):
            responder.schedule(after: delay) { perform(inner, keepAlive: keepAlive, responder: responder) }
        case .whenOpen(let gate, let inner):
            if gate.isOpen {
                perform(inner, keepAlive: keepAlive, responder: responder)
            } else {
                responder.schedule(after: .milliseconds(5)) { perform(reply, keepAlive: keepAlive, responder: responder) }
            }
        }
    }

    /// Runs script steps until a pause (continued by a loop timer) or a terminal step.
    static func run(_ steps: ArraySlice<Step>, keepAlive: Bool, responder: HTTPServerResponder) {
        var rest = steps
        while let step = rest.popFirst() {
            switch step {
            case .send(let data):
                responder.writeRaw([UInt8](data))
            case .pause(let delay):
                let remaining = rest
                responder.schedule(after: delay) { run(remaining, keepAlive: keepAlive, responder: responder) }
                return
            case .whenSent(let action):
                let remaining = rest
                responder.whenFlushed {
                    action()
                    run(remaining, keepAlive: keepAlive, responder: responder)
                }
                return
            case .shutdownWrite:
                responder.shutdownWrite()
                return
            case .close:
                responder.closeConnection()
                return
            case .reset:
                responder.resetConnection()
                return
            case .stall:
                return
            }
        }
        responder.complete(keepAlive: keepAlive)
    }
}
