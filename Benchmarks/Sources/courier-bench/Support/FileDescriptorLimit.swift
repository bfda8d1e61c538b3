import Glibc

/// The open-file limit, which 10,000 sockets exceed on a default shell.
enum FileDescriptorLimit {
    /// Raises the soft limit to the hard limit.
    /// - Returns: the soft limit in force afterwards.
    @discardableResult
    static func raiseToMaximum() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return Int(clamping: limit.rlim_cur)
    }
}
