/// The closure style: every operation of the service with a `success` callback that receives
/// model objects and a `failure` callback that receives a ``ChatCaveError``.
///
/// Exactly one of the two is called, once, on ``ChatCaveService/callbackQueue``. Each call
/// returns a ``ChatCaveRequestID``; ``ChatCaveService/cancelRequest(id:)`` ends the request
/// with `failure(.cancelled)` unless it has ended already. A request keeps running when the
/// caller keeps no reference to the service.
extension ChatCaveService {
    /// A success callback without a value.
    public typealias Completion = @Sendable () -> Void
    /// The failure callback of every operation.
    public typealias Failure = @Sendable (ChatCaveError) -> Void

    /// Cancels a request started in the closure style; its `failure` gets ``ChatCaveError/cancelled``.
    /// Unknown or finished ids are ignored.
    public func cancelRequest(id: ChatCaveRequestID) {
        running.withLock { $0[id] }?.cancel()
    }

    /// Cancels every request started in the closure style that has not ended.
    public func cancelAllRequests() {
        for task in running.withLock({ Array($0.values) }) { task.cancel() }
    }

    /// Signs up; see ``signUp(name:password:)``.
    @discardableResult
    public func signUp(name: String, password: String, success: @escaping @Sendable (User) -> Void,
                       failure: @escaping Failure) -> ChatCaveRequestID {
        launch({ [self] () async throws(ChatCaveError) in try await signUp(name: name, password: password) }, success, failure)
    }

    /// Signs in; see ``signIn(name:password:)``.
    @discardableResult
    public func signIn(name: String, password: String, success: @escaping @Sendable (User) -> Void,
                       failure: @escaping Failure) -> ChatCaveRequestID {
        launch({ [self] () async throws(ChatCaveError) in try await signIn(name: name, password: password) }, success, failure)
    }

    /// Signs out; see ``signOut()``.
    @discardableResult
    public func signOut(success: @escaping Completion, failure: @escaping Failure) -> ChatCaveRequestID {
        launch({ [self] () async throws(ChatCaveError) in try await signOut() }, { success() }, failure)
    }

    /// Fetches every user; see ``fetchUsers()``.
    @discardableResult
    public func fetchUsers(success: @escaping @Sendable ([User]) -> Void, failure: @escaping Failure) -> ChatCaveRequestID {
        launch({ [self] () async throws(ChatCaveError) in try await fetchUsers() }, success, failure)
    }

    /// Fetches one user; see ``fetchUser(id:)``.
    @discardableResult
    public func fetchUser(id: String, success: @escaping @Sendable (User) -> Void, failure: @escaping Failure) -> ChatCaveRequestID {
        launch({ [self] () async throws(ChatCaveError) in try await fetchUser(id: id) }, success, failure)
    }

    /// Fetches every chatroom; see ``fetchChatrooms()``.
    @discardableResult
    public func fetchChatrooms(success: @escaping @Sendable ([Chatroom]) -> Void, failure: @escaping Failure) -> ChatCaveRequestID {
        launch({ [self] () async throws(ChatCaveError) in try await fetchChatrooms() }, success, failure)
    }

    /// Creates a chatroom; see ``createChatroom(named:)``.
    @discardableResult
    public func createChatroom(named name: String, success: @escaping @Sendable (Chatroom) -> Void,
                               failure: @escaping Failure) -> ChatCaveRequestID {
        launch({ [self] () async throws(ChatCaveError) in try await createChatroom(named: name) }, success, failure)
    }

    /// Fetches one chatroom; see ``fetchChatroom(id:)``.
    @discardableResult
    public func fetchChatroom(id: String, success: @escaping @Sendable (Chatroom) -> Void,
                              failure: @escaping Failure) -> ChatCaveRequestID {
        launch({ [self] () async throws(ChatCaveError) in try await fetchChatroom(id: id) }, success, failure)
    }

    /// Deletes a chatroom; see ``deleteChatroom(id:)``. `success` receives the remaining rooms.
    @discardableResult
    public func deleteChatroom(id: String, success: @escaping @Sendable ([Chatroom]) -> Void,
                               failure: @escaping Failure) -> ChatCaveRequestID {
        launch({ [self] () async throws(ChatCaveError) in try await deleteChatroom(id: id) }, success, failure)
    }

    /// Joins a chatroom; see ``join(id:)``. `success` receives the room's chatters.
    @discardableResult
    public func join(id: String, success: @escaping @Sendable ([Chatter]) -> Void, failure: @escaping Failure) -> ChatCaveRequestID {
        launch({ [self] () async throws(ChatCaveError) in try await join(id: id) }, success, failure)
    }

    /// Leaves a chatroom; see ``leave(id:)``.
    @discardableResult
    public func leave(id: String, success: @escaping Completion, failure: @escaping Failure) -> ChatCaveRequestID {
        launch({ [self] () async throws(ChatCaveError) in try await leave(id: id) }, { success() }, failure)
    }

    /// Fetches a room's chatters; see ``fetchChatters(in:)``.
    @discardableResult
    public func fetchChatters(in roomID: String, success: @escaping @Sendable ([Chatter]) -> Void,
                              failure: @escaping Failure) -> ChatCaveRequestID {
        launch({ [self] () async throws(ChatCaveError) in try await fetchChatters(in: roomID) }, success, failure)
    }

    /// Fetches a room's messages; see ``fetchMessages(for:since:)``.
    @discardableResult
    public func fetchMessages(for roomID: String, since: String? = nil, success: @escaping @Sendable ([Message]) -> Void,
                              failure: @escaping Failure) -> ChatCaveRequestID {
        launch({ [self] () async throws(ChatCaveError) in try await fetchMessages(for: roomID, since: since) }, success, failure)
    }

    /// Posts a message; see ``postMessage(text:to:)``.
    @discardableResult
    public func postMessage(text: String, to roomID: String, success: @escaping @Sendable (Message) -> Void,
                            failure: @escaping Failure) -> ChatCaveRequestID {
        launch({ [self] () async throws(ChatCaveError) in try await postMessage(text: text, to: roomID) }, success, failure)
    }

    /// Runs an operation on a task of its own and delivers its outcome on the callback queue.
    private func launch<Value: Sendable>(_ work: @escaping @Sendable () async throws(ChatCaveError) -> Value,
                                         _ success: @escaping @Sendable (Value) -> Void,
                                         _ failure: @escaping Failure) -> ChatCaveRequestID {
        let id = ChatCaveRequestID.next()
        let queue = callbackQueue
        // Created under the lock, so the task cannot unregister itself before it is registered.
        running.withLock { running in
            running[id] = Task { [self] in
                let result: Result<Value, ChatCaveError>
                do throws(ChatCaveError) {
                    result = .success(try await work())
                } catch {
                    result = .failure(error)
                }
                _ = self.running.withLock { $0.removeValue(forKey: id) }
                queue.async {
                    switch result {
                    case .success(let value): success(value)
                    case .failure(let error): failure(error)
                    }
                }
            }
        }
        return id
    }
}
