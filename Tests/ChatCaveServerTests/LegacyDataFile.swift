
/// A data file written by the server before SQLite (commit 263dede, `chatcave serve --data-dir`):
/// alice (password `wonderland`, API key ``aliceKey``) and bob (`builder`, ``bobKey``) signed up
/// with the default 210,000 PBKDF2 iterations; alice created "Lobby" and "Empty room"; both
/// joined Lobby, each posted a line (bob's has a line break, alice's a non-ASCII character),
/// and bob left. The file is kept byte for byte as that server wrote it (format 3).
enum LegacyDataFile {
    static let aliceKey = "1d7b0941-d5b9-4892-ba3f-e6cf4435e85b"
    static let bobKey = "baa56fa2-eaef-465f-a0a0-a95770c91fbd"
    static let aliceID = "c1ce0628-5e1b-4603-8445-5f284b817eee"
    static let lobbyID = "7438d153-fbb8-4b30-be03-109b072c740c"
    static let emptyRoomID = "c7cf7ab4-bec2-43cf-ba2d-d6802d6790b1"
    /// The ids of Lobby's messages, in order: alice joins, bob joins, alice, bob, bob leaves.
    static let lobbyMessageIDs = ["6a9c658c-35e1-4800-aa90-5625c350afae", "068e94bd-58bb-4ba3-9546-1ef8122e7241",
                                  "c22cce59-ccdc-48d0-bda9-4f39acfb7718", "f80bd01d-2385-458d-9d35-bcd4c8eb22fa",
                                  "0784b07a-b3e4-43cf-b896-3eb94b087d94"]

    /// The file's bytes, as UTF-8 text.
    static let text = #"""
{"format":3,"rooms":[{"chatterIDs":["c1ce0628-5e1b-4603-8445-5f284b817eee"],"id":"7438d153-fbb8-4b30-be03-109b072c740c","messages":[{"author":"alice","authorID":"c1ce0628-5e1b-4603-8445-5f284b817eee","id":"6a9c658c-35e1-4800-aa90-5625c350afae","timestamp":1795439342491,"type":"join"},{"author":"bob","authorID":"ebd53706-32d8-424b-b9d0-a210798a3340","id":"068e94bd-58bb-4ba3-9546-1ef8122e7241","timestamp":1795439342540,"type":"join"},{"author":"alice","authorID":"c1ce0628-5e1b-4603-8445-5f284b817eee","id":"c22cce59-ccdc-48d0-bda9-4f39acfb7718","text":"hello, bob ✓","timestamp":1795439342577,"type":"chat"},{"author":"bob","authorID":"ebd53706-32d8-424b-b9d0-a210798a3340","id":"f80bd01d-2385-458d-9d35-bcd4c8eb22fa","text":"hi alice\ntwo lines","timestamp":1795439342612,"type":"chat"},{"author":"bob","authorID":"ebd53706-32d8-424b-b9d0-a210798a3340","id":"0784b07a-b3e4-43cf-b896-3eb94b087d94","timestamp":1795439342649,"type":"leave"}],"name":"Lobby"},{"chatterIDs":[],"id":"c7cf7ab4-bec2-43cf-ba2d-d6802d6790b1","messages":[],"name":"Empty room"}],"users":[{"apiKeyDigests":["164b083bdef088a930615d10981235351941e36283f446569fd8d2c3bb0eed53"],"id":"c1ce0628-5e1b-4603-8445-5f284b817eee","name":"alice","passwordHash":"pbkdf2-sha256$210000$DmDy0yCssCKMgdyOHDJJwQ==$nWjfp8eQ8DfXllml8+NSEjIF11AVR2PHQiBFrlSejFY="},{"apiKeyDigests":["eb096dceb16062862e48096ad727f9d93432071d2df5e12f895b28c47467a437"],"id":"ebd53706-32d8-424b-b9d0-a210798a3340","name":"bob","passwordHash":"pbkdf2-sha256$210000$YRiqQ7N2SUTb4ckAehGddA==$\/8pl546qggsqrK8PMaP6NOCA3LIChGBhKSeXdZMOepo="}]}
"""#
}
