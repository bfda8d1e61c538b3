import ChatCave
import Foundation
import Testing

@Suite("ChatCave models")
struct ModelTests {
    private let messageJSON = #"{"id":"m1","type":"chat","text":"hi","author":"alice","timestamp":"2014-03-21T18:22:33.123Z"}"#

    @Test("a message decodes from the API's JSON, timestamp in UTC to the millisecond")
    func decodeMessage() throws {
        let message = try JSONDecoder().decode(Message.self, from: Data(messageJSON.utf8))
        #expect(message.id == "m1")
        #expect(message.type == .chat)
        #expect(message.text == "hi")
        #expect(message.author == "alice")
        #expect(message.timestamp == Date(timeIntervalSince1970: 1_395_426_153.123))
    }

    @Test("message types map case-insensitively; anything else is .unknown and never fails decoding")
    func messageTypes() throws {
        for (value, expected) in [("\"JOIN\"", MessageType.join), ("\"Leave\"", .leave), ("\"chat\"", .chat),
                                  ("\"shout\"", .unknown), ("42", .unknown), ("null", .unknown)] {
            let json = #"{"id":"m","type":"# + value + #","text":null,"author":"a","timestamp":"2014-03-21T18:22:33.123Z"}"#
            let message = try JSONDecoder().decode(Message.self, from: Data(json.utf8))
            #expect(message.type == expected, "\(value)")
            #expect(message.text == nil)
        }
        let untyped = #"{"id":"m","author":"a","timestamp":"2014-03-21T18:22:33Z"}"#
        #expect(try JSONDecoder().decode(Message.self, from: Data(untyped.utf8)).type == .unknown)
    }

    @Test("timestamps: fractions of any length, offsets; invalid ones fail decoding")
    func timestamps() throws {
        func date(_ stamp: String) throws -> Date {
            let json = #"{"id":"m","type":"chat","text":"x","author":"a","timestamp":""# + stamp + #""}"#
            return try JSONDecoder().decode(Message.self, from: Data(json.utf8)).timestamp
        }
        let reference = Date(timeIntervalSince1970: 1_395_426_153.123)
        #expect(try date("2014-03-21T18:22:33.123456Z") == reference)
        #expect(try date("2014-03-21T19:22:33.123+01:00") == reference)
        #expect(try date("2014-03-21T18:22:33.1Z") == Date(timeIntervalSince1970: 1_395_426_153.1))
        for bad in ["yesterday", "2014-13-21T18:22:33.123Z", "2014-03-21 18:22:33", "2014-03-21T18:22:33.Z"] {
            #expect(throws: DecodingError.self) { try date(bad) }
        }
    }

    @Test("Codable round trip: encode then decode gives the same models; text null is explicit")
    func codableRoundTrip() throws {
        let message = Message(id: "m", type: .join, author: "bob", timestamp: Date(timeIntervalSince1970: 1_700_000_000.4567))
        let data = try JSONEncoder().encode(message)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["text"] is NSNull)
        #expect(object["timestamp"] as? String == "2023-11-14T22:13:20.457Z")
        #expect(try JSONDecoder().decode(Message.self, from: data) == message)
        let room = Chatroom(id: "r", name: "Lobby", chatters: [Chatter(id: "u", name: "alice")])
        #expect(try JSONDecoder().decode(Chatroom.self, from: JSONEncoder().encode(room)) == room)
        let user = User(id: "u", name: "alice", apiKey: "k")
        #expect(try JSONDecoder().decode(User.self, from: JSONEncoder().encode(user)) == user)
        #expect(try JSONDecoder().decode(Chatroom.self, from: Data(#"{"id":"r","name":"x"}"#.utf8)).chatters.isEmpty)
    }

    @Test("dictionary representations round-trip both ways")
    func dictionaries() throws {
        let raw = try #require(try JSONSerialization.jsonObject(with: Data(messageJSON.utf8)) as? [String: Any])
        let message = try #require(Message(dictionary: raw))
        #expect(NSDictionary(dictionary: message.dictionaryRepresentation).isEqual(to: raw))
        #expect(Message(dictionary: message.dictionaryRepresentation) == message)
        let join = Message(id: "j", type: .join, author: "bob", timestamp: Date())
        #expect(join.dictionaryRepresentation["text"] is NSNull)
        #expect(Message(dictionary: join.dictionaryRepresentation) == join)

        let room = Chatroom(id: "r", name: "Lobby", chatters: [Chatter(id: "u1", name: "alice"), Chatter(id: "u2", name: "bob")])
        #expect(Chatroom(dictionary: room.dictionaryRepresentation) == room)
        let roomRaw: [String: Any] = ["id": "r", "name": "Lobby", "chatters": [["id": "u1", "name": "alice"]]]
        #expect(NSDictionary(dictionary: try #require(Chatroom(dictionary: roomRaw)).dictionaryRepresentation).isEqual(to: roomRaw))

        for user in [User(id: "u", name: "alice", apiKey: "k"), User(id: "v", name: "bob")] {
            #expect(User(dictionary: user.dictionaryRepresentation) == user)
        }
        #expect(User(dictionary: ["id": "u"]) == nil)
        #expect(Chatter(dictionary: ["id": 3, "name": "x"]) == nil)
        #expect(Message(dictionary: ["id": "m", "author": "a", "timestamp": "nope"]) == nil)
        #expect(Chatroom(dictionary: ["id": "r", "name": "x", "chatters": [["name": "no id"]]]) == nil)
    }
}
