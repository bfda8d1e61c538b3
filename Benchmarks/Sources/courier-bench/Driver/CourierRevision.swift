import Foundation

/// Which Courier the run measured: the checkout's commit, and whether its sources had
/// uncommitted changes (the benchmark builds the working tree, `.package(path: "..")`).
enum CourierRevision {
    /// `commit 0eeaa71` or `commit 0eeaa71 + 3 uncommitted files under Sources/`, or
    /// `unknown (no git)` when git cannot tell.
    static func describe(folder: URL) -> String {
        let repository = BuildFolder.root.deletingLastPathComponent().deletingLastPathComponent().path
        guard let commit = git(["-C", repository, "rev-parse", "--short", "HEAD"], folder: folder)?
            .trimmingCharacters(in: .whitespacesAndNewlines), !commit.isEmpty else { return "unknown (no git)" }
        let changed = git(["-C", repository, "status", "--porcelain", "--", "Sources"], folder: folder)?
            .split(separator: "\n").count ?? 0
        return "commit \(commit)" + (changed > 0 ? " + \(changed) uncommitted files under Sources/" : "")
    }

    /// What `git arguments` printed, or `nil` when it failed.
    private static func git(_ arguments: [String], folder: URL) -> String? {
        let output = folder.appendingPathComponent("git.txt").path
        guard let child = try? ChildProcess("/usr/bin/git", arguments, standardOutput: output, standardError: "/dev/null"),
              let exit = child.wait(timeout: 10) ?? child.stop(), exit.status == 0 else { return nil }
        return try? String(contentsOfFile: output, encoding: .utf8)
    }
}
