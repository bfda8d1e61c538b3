/// A command's arguments, parsed by hand: positionals, `--option value` (or `--option=value`)
/// and flags. `--` ends the options. `-h` is `--help`.
struct CommandArguments: Sendable, Equatable {
    /// A usage mistake: an unknown option, a missing value, a missing or extra argument.
    struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong, in plain words.
        let description: String
    }

    /// The arguments that are not options, in order.
    private(set) var positionals: [String] = []
    /// The options given with a value.
    private(set) var options: [String: String] = [:]
    /// The flags given.
    private(set) var flags: Set<String> = []

    /// Parses `arguments`.
    /// - Parameters:
    ///   - arguments: what follows the command's name.
    ///   - valueOptions: the option names (without `--`) that take a value.
    ///   - flagOptions: the flag names (without `--`); `help` is always accepted.
    /// - Throws: ``UsageError`` for an unknown option or a missing value.
    init(_ arguments: [String], valueOptions: Set<String> = [], flagOptions: Set<String> = []) throws(UsageError) {
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || !argument.hasPrefix("-") || argument == "-" {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            if argument == "-h" {
                flags.insert("help")
                continue
            }
            guard argument.hasPrefix("--") else { throw UsageError(description: "unknown option '\(argument)'") }
            let body = argument.dropFirst(2)
            let name: String
            var inlineValue: String?
            if let equals = body.firstIndex(of: "=") {
                name = String(body[..<equals])
                inlineValue = String(body[body.index(after: equals)...])
            } else {
                name = String(body)
            }
            if name == "help" || flagOptions.contains(name) {
                guard inlineValue == nil else { throw UsageError(description: "--\(name) takes no value") }
                flags.insert(name)
            } else if valueOptions.contains(name) {
                if let inlineValue {
                    options[name] = inlineValue
                } else {
                    guard index < arguments.count else { throw UsageError(description: "--\(name) needs a value") }
                    options[name] = arguments[index]
                    index += 1
                }
            } else {
                throw UsageError(description: "unknown option '--\(name)'")
            }
        }
    }

    /// Whether `--help` or `-h` was given.
    var wantsHelp: Bool { flags.contains("help") }

    /// The value of an option, or `nil`.
    subscript(option name: String) -> String? { options[name] }

    /// Checks the number of positionals.
    /// - Throws: ``UsageError`` when there are fewer than `minimum` or more than `maximum`.
    func requirePositionals(_ minimum: Int, _ maximum: Int?, usage: String) throws(UsageError) {
        if positionals.count < minimum { throw UsageError(description: "missing argument; usage: \(usage)") }
        if let maximum, positionals.count > maximum {
            throw UsageError(description: "unexpected argument '\(positionals[maximum])'; usage: \(usage)")
        }
    }

    /// An option's value as a whole number within `range`, or `nil` when absent.
    /// - Throws: ``UsageError`` when it is not a number within the range.
    func integer(_ name: String, in range: ClosedRange<Int>) throws(UsageError) -> Int? {
        guard let text = options[name] else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw UsageError(description: "--\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }
}
