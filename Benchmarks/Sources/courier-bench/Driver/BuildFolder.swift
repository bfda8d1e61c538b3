import Foundation

/// Where the benchmark keeps its files: under the build folder the executable lives in
/// (`Benchmarks/.build`), never in the source tree.
enum BuildFolder {
    /// The executable's own folder (`…/.build/<triple>/release`).
    static var executableDirectory: URL {
        let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: path).deletingLastPathComponent()
    }

    /// The nearest enclosing folder whose name starts with `.build`, else the executable's folder.
    static var root: URL {
        var folder = executableDirectory
        while folder.path != "/" {
            if folder.lastPathComponent.hasPrefix(".build") { return folder }
            folder = folder.deletingLastPathComponent()
        }
        return executableDirectory
    }

    /// `<root>/<name>`, created (with its parents) if missing.
    /// - Throws: when the folder cannot be created.
    static func folder(_ name: String) throws -> URL {
        let url = root.appendingPathComponent(name, isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
