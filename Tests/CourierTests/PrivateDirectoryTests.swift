@testable import Courier
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("PrivateDirectory and FileCredentialStore on disk")
struct PrivateDirectoryTests {
    private static let credential = Credential(user: "alice", secret: "hunter2-token")

    /// A fresh path under the temporary directory (not created), removed by `body`'s caller.
    private func withScratch(_ body: (URL) throws -> Void) throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("courier-private-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        try body(scratch)
    }

    private func mode(of url: URL) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int) & 0o777
    }

    /// Creates `directory` with `mode` (chmod, so the umask does not matter) and plants a
    /// credentials file in it.
    private func plant(in directory: URL, mode: Int) throws -> URL {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("credentials.json")
        try JSONEncoder().encode(["api": Self.credential]).write(to: file)
        #expect(chmod(directory.path, mode_t(mode)) == 0)
        return file
    }

    @Test("L11 the credential store creates its directory, and missing parents, with mode 0700")
    func createdDirectoryIsPrivate() throws {
        try withScratch { scratch in
            let directory = scratch.appendingPathComponent("nested/store")
            let store = FileCredentialStore(fileURL: directory.appendingPathComponent("credentials.json"))
            try store.save(Self.credential, for: "api")
            #expect(try mode(of: directory) == 0o700)
            #expect(try mode(of: directory.deletingLastPathComponent()) == 0o700)
            #expect(try mode(of: directory.appendingPathComponent("credentials.json")) == 0o600)
            #expect(try store.load(for: "api") == Self.credential)
            // Only the file itself is left: no temporary file survives the rename.
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["credentials.json"])
        }
    }

    @Test("L11 a 0777 directory is refused with a clear error, and the file planted in it is not read")
    func worldWritableDirectoryIsRefused() throws {
        try withScratch { scratch in
            let file = try plant(in: scratch, mode: 0o777)
            let store = FileCredentialStore(fileURL: file)
            #expect(throws: PrivateDirectory.Failure.writableByOthers(scratch.path, mode: 0o777)) { try store.load(for: "api") }
            let planted = try Data(contentsOf: file)
            #expect(throws: PrivateDirectory.Failure.self) { try store.save(Credential(user: "bob", secret: "s"), for: "api") }
            #expect(try Data(contentsOf: file) == planted)  // nothing written either
            let message = "\(PrivateDirectory.Failure.writableByOthers(scratch.path, mode: 0o777))"
            #expect(message.contains(scratch.path) && message.contains("777") && message.contains("chmod 700"))
        }
    }

    @Test("L11 a group-writable directory is refused; one that is only readable by others is used")
    func groupWritableRefusedReadableAccepted() throws {
        try withScratch { scratch in
            let file = try plant(in: scratch, mode: 0o770)
            #expect(throws: PrivateDirectory.Failure.writableByOthers(scratch.path, mode: 0o770)) {
                try FileCredentialStore(fileURL: file).load(for: "api")
            }
            #expect(chmod(scratch.path, 0o755) == 0)
            #expect(try FileCredentialStore(fileURL: file).load(for: "api") == Self.credential)
        }
    }

    @Test("L11 a directory owned by another user is refused, and its planted file is not read")
    func foreignOwnerIsRefused() throws {
        guard geteuid() == 0 else { return }  // only root can give a directory away
        try withScratch { scratch in
            let file = try plant(in: scratch, mode: 0o700)
            #expect(chown(scratch.path, 65_534, 65_534) == 0)
            #expect(throws: PrivateDirectory.Failure.ownedByAnotherUser(scratch.path, owner: 65_534)) {
                try FileCredentialStore(fileURL: file).load(for: "api")
            }
        }
    }

    @Test("L11 a symbolic link in place of the directory is refused, and bad file names are errors")
    func symbolicLinkAndBadNames() throws {
        try withScratch { scratch in
            let target = scratch.appendingPathComponent("real")
            let file = try plant(in: target, mode: 0o700)
            let link = scratch.appendingPathComponent("link")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
            #expect(throws: PrivateDirectory.Failure.notADirectory(link.path)) {
                try FileCredentialStore(fileURL: link.appendingPathComponent("credentials.json")).load(for: "api")
            }
            let directory = PrivateDirectory(url: target)
            #expect(try directory.contents(of: file.lastPathComponent) != nil)
            for name in ["", ".", "..", "a/b"] {
                #expect(throws: PrivateDirectory.Failure.invalidFileName(name)) { try directory.write(Data(), to: name) }
            }
            #expect(try PrivateDirectory(url: scratch.appendingPathComponent("missing")).contents(of: "x") == nil)
        }
    }
}
