import Foundation
import Glibc

/// The machine a run was made on, for the report's header.
enum MachineInfo {
    /// `Linux 6.1.0 x86_64`.
    static var system: String {
        var names = utsname()
        uname(&names)
        func text<T>(_ field: T) -> String {
            withUnsafeBytes(of: field) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
        return "\(text(names.sysname)) \(text(names.release)) \(text(names.machine))"
    }

    /// The CPU model from `/proc/cpuinfo`.
    static var processor: String {
        let info = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let line = info.split(separator: "\n").first { $0.hasPrefix("model name") }
        return line?.split(separator: ":", maxSplits: 1).last?.trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
    }

    /// Online cores.
    static var cores: Int { sysconf(Int32(_SC_NPROCESSORS_ONLN)) }

    /// Total memory in GiB.
    static var memoryGiB: Double {
        let info = (try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8)) ?? ""
        let kiB = info.split(separator: "\n").first { $0.hasPrefix("MemTotal") }
            .flatMap { $0.split(separator: " ").dropFirst().first }.flatMap { Double($0) } ?? 0
        return kiB / 1024 / 1024
    }

    /// The 1, 5 and 15 minute load averages, as `/proc/loadavg` gives them.
    static var loadAverage: String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    /// The 1, 5 and 15 minute load averages as numbers.
    static var loadAverages: [Double] {
        loadAverage.split(separator: " ").compactMap { Double($0) }
    }

    /// One line: system, CPU, cores, memory.
    static var summary: String {
        "\(system), \(processor), \(cores) cores, \(String(format: "%.0f", memoryGiB)) GiB"
    }
}
