import ChatCave
import CourierTestSupport
import Foundation
import Synchronization
import Testing

@Suite("ChatCaveService: the closure style")
struct ClosureStyleTests {
    /// Runs one closure-style call and waits for its single outcome, checking the queue it ran on.
    private func outcome<Value: Sendable>(
        on queue: DispatchQueue, key: DispatchSpecificKey<String>,
        _ start: (@escaping @Sendable (Value) -> Void, @escaping @Sendable (ChatCaveError) -> Void) -> ChatCaveRequestID
    ) async -> Result<Value, ChatCaveError> {
        let calls = Mutex<[Result<Value, ChatCaveError>]>([])
        let onQueue = Mutex(true)
        _ = start({ value in
            onQueue.withLock { $0 = $0 && DispatchQueue.getSpecific(key: key) == "callbacks" }
            calls.withLock { $0.append(.success(value)) }
        }, { error in
            onQueue.withLock { $0 = $0 && DispatchQueue.getSpecific(key: key) == "callbacks" }
            calls.withLock { $0.append(.failure(error)) }
        })
        _ = await eventually { !calls.withLock { $0 }.isEmpty }
        try? await Task.sleep(for: .milliseconds(30))
        let all = calls.withLock { $0 }
        #expect(all.count == 1)
        #expect(onQueue.withLock { $0 })
        return all.first ?? .failure(.cancelled)
    }

    @Test("every operation delivers models or a ChatCaveError, once, on the callback queue")
    func everyOperation() async throws {
        try await withChatCave { fixture in
            let queue = DispatchQueue(label: "test.callbacks")
            let key = DispatchSpecificKey<String>()
            queue.setSpecific(key: key, value: "callbacks")
            let service = fixture.service(queue: queue)
            let user = try await outcome(on: queue, key: key) { service.signUp(name: "alice", password: "pw", success: $0, failure: $1) }.get()
            #expect(user.name == "alice")
            _ = try await outcome(on: queue, key: key) { service.signIn(name: "alice", password: "pw", success: $0, failure: $1) }.get()
            let room = try await outcome(on: queue, key: key) { service.createChatroom(named: "Lobby", success: $0, failure: $1) }.get()
            #expect(try await outcome(on: queue, key: key) { service.fetchChatrooms(success: $0, failure: $1) }.get() == [room])
            #expect(try await outcome(on: queue, key: key) { service.fetchChatroom(id: room.id, success: $0, failure: $1) }.get() == room)
            #expect(try await outcome(on: queue, key: key) { service.join(id: room.id, success: $0, failure: $1) }.get().map(\.name) == ["alice"])
            #expect(try await outcome(on: queue, key: key) { service.fetchChatters(in: room.id, success: $0, failure: $1) }.get().count == 1)
            let message = try await outcome(on: queue, key: key) { service.postMessage(text: "hi", to: room.id, success: $0, failure: $1) }.get()
            #expect(try await outcome(on: queue, key: key) { service.fetchMessages(for: room.id, success: $0, failure: $1) }.get().last == message)
            #expect(try await outcome(on: queue, key: key) { service.fetchUsers(success: $0, failure: $1) }.get().count == 1)
            #expect(try await outcome(on: queue, key: key) { service.fetchUser(id: user.id, success: $0, failure: $1) }.get().id == user.id)
            let left: Result<Void, ChatCaveError> = await outcome(on: queue, key: key) { done, failed in
                service.leave(id: room.id, success: { done(()) }, failure: failed)
            }
            #expect((try? left.get()) != nil)
            #expect(try await outcome(on: queue, key: key) { service.deleteChatroom(id: room.id, success: $0, failure: $1) }.get().isEmpty)
            let missing: Result<Chatroom, ChatCaveError> = await outcome(on: queue, key: key) { service.fetchChatroom(id: "x", success: $0, failure: $1) }
            #expect(throws: ChatCaveError.notFound) { try missing.get() }
            let out: Result<Void, ChatCaveError> = await outcome(on: queue, key: key) { done, failed in
                service.signOut(success: { done(()) }, failure: failed)
            }
            #expect((try? out.get()) != nil)
            #expect(service.currentUser == nil)
        }
    }

    @Test("a request keeps running when the caller keeps no reference to the service")
    func managed() async throws {
        try await withChatCave { fixture in
            let done = Mutex<[String]?>(nil)
            do {
                let service = fixture.service()
                service.signUp(name: "alice", password: "pw", success: { _ in
                    done.withLock { $0 = [] }
                }, failure: { error in done.withLock { $0 = ["\(error)"] } })
            }
            #expect(await eventually { done.withLock { $0 } != nil })
            #expect(done.withLock { $0 } == [])
        }
    }
}
