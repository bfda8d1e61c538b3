import Foundation
import Glibc

/// What `/proc/self/status` and `getrusage` say about this process right now.
struct ProcessStatus: Sendable {
    /// Resident memory now (`VmRSS`), in KiB.
    var residentKiB: Int = 0
    /// The highest resident memory of the process's lifetime (`VmHWM`), in KiB.
    var peakResidentKiB: Int = 0
    /// Threads now (`Threads`).
    var threads: Int = 0

    /// Reads `/proc/self/status`; fields it cannot read stay 0.
    static func current() -> ProcessStatus {
        var status = ProcessStatus()
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return status }
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let number = Int(parts[1].split(whereSeparator: \.isWhitespace).first ?? "") ?? 0
            switch parts[0] {
            case "VmRSS": status.residentKiB = number
            case "VmHWM": status.peakResidentKiB = number
            case "Threads": status.threads = number
            default: break
            }
        }
        return status
    }

    /// User plus system CPU time this process has used so far, in seconds.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.totalCPUSeconds
    }

    /// Context switches of every thread of this process so far, voluntary (a thread went to
    /// sleep) and involuntary (it was preempted).
    static func contextSwitches() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.contextSwitches
    }
}

extension rusage {
    /// `ru_utime + ru_stime` in seconds.
    var totalCPUSeconds: Double {
        Double(ru_utime.tv_sec) + Double(ru_utime.tv_usec) / 1e6
            + Double(ru_stime.tv_sec) + Double(ru_stime.tv_usec) / 1e6
    }

    /// `ru_nvcsw + ru_nivcsw`: voluntary and involuntary context switches.
    var contextSwitches: Int { ru_nvcsw + ru_nivcsw }
}
