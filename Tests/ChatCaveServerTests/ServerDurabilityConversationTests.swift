import CourierTestServer
import CourierTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("ChatCave server: durability conversations", .ownThread)
struct ServerDurabilityConversationTests {
    /// The mode bits of a file or directory.
    private static func mode(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    /// Checks the data directory holds only the database files, each mode 0600, in a 0700 directory.
    private static func checkModes(_ directory: URL, _ conversation: DurabilityConversation) {
        conversation.check(mode(directory.path) == 0o700, "the data directory is mode \(String(mode(directory.path), radix: 8))")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        conversation.check(names.contains("chatcave.sqlite") && Set(names).isSubset(of: ["chatcave.sqlite", "chatcave.sqlite-wal", "chatcave.sqlite-shm"]),
                           "the data directory holds \(names.sorted())")
        for name in names {
            let path = directory.appendingPathComponent(name).path
            conversation.check(mode(path) == 0o600, "\(name) is mode \(String(mode(path), radix: 8))")
        }
    }

    @Test("a seeded conversation of several clients with a server killed (SIGKILL, with requests in flight) and stopped (SIGTERM) at random keeps exactly what it acknowledged", .timeLimit(.minutes(2)))
    func conversation() throws {
        let directory = StoreKind.temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(at: directory)
            try? FileManager.default.removeItem(atPath: directory.path + "-stdout.txt")
            try? FileManager.default.removeItem(atPath: directory.path + "-stderr.txt")
        }
        let conversation = DurabilityConversation(directory: directory, random: .forTest())
        defer { conversation.stop(SIGKILL) }
        try conversation.killWhileStarting()
        try conversation.start()
        for _ in 0..<3 { conversation.signUp() }
        let deadline = ContinuousClock.now + .seconds(18)  // fewer cycles on a slow (sanitized, loaded) run
        var stops: [String] = []
        for cycle in 0..<8 where !conversation.failed && ContinuousClock.now < deadline {
            for _ in 0..<(25 + Int(conversation.random.next() % 36)) where !conversation.failed { conversation.step() }
            guard !conversation.failed else { break }
            let roll = cycle == 0 ? 0 : conversation.random.next() % 6
            switch roll {
            case 0, 1, 2:
                conversation.burst(thenStopWith: SIGKILL)
            case 3:
                conversation.burst(thenStopWith: SIGTERM)
            case 4:
                conversation.stop(SIGKILL)
            default:
                conversation.stop(SIGTERM)
            }
            stops.append(["burst+kill", "burst+kill", "burst+kill", "burst+term", "kill", "term"][Int(roll)])
            Self.checkModes(directory, conversation)
            try conversation.start()
            conversation.verify()
        }
        // A clean stop loses nothing: the restarted server holds exactly what the model holds.
        for _ in 0..<10 where !conversation.failed { conversation.step() }
        conversation.stop(SIGTERM)
        Self.checkModes(directory, conversation)
        try conversation.start()
        conversation.verify()
        Self.checkModes(directory, conversation)  // while it runs
        conversation.stop(SIGTERM)
        Self.checkModes(directory, conversation)
        let messages = conversation.model.rooms.reduce(0) { $0 + $1.messages.count }
        let summary = "stops \(stops); \(conversation.lostAnswers) burst changes lost their answer, \(conversation.model.lostButStored) of them were stored"
        #expect(!conversation.failed, "\(conversation.random.replayHint): \(summary)")
        #expect(conversation.model.users.count >= 3 && messages > 0, "the conversation did something: \(conversation.model.users.count) users, \(messages) messages")
    }
}
