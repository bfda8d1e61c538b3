/// Request counts per path, holding at most ``HTTPServer/maxCountedPaths`` keys.
///
/// The first distinct paths (up to one less than the cap, each at most
/// ``HTTPServer/maxCountedPathBytes`` long) get a count of their own; every other request is
/// counted under ``HTTPServer/otherPathsKey``. A peer that requests endless unique or huge
/// paths therefore cannot make the counters grow without bound.
struct PathCounts {
    private(set) var counts: [String: Int] = [:]

    /// Counts one request for `path`.
    mutating func record(_ path: String) {
        if counts[path] != nil {
            counts[path, default: 0] += 1
        } else if counts.count < HTTPServer.maxCountedPaths - 1, path.utf8.count <= HTTPServer.maxCountedPathBytes {
            counts[path] = 1
        } else {
            counts[HTTPServer.otherPathsKey, default: 0] += 1
        }
    }

    /// The count of `path` (or of ``HTTPServer/otherPathsKey``); 0 when it has none.
    func count(_ path: String) -> Int { counts[path] ?? 0 }
}
