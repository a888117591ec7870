/// The options one command accepts.
struct OptionSpec {
    /// Options that take a value (`--trust FILE` or `--trust=FILE`); they may repeat.
    var valued: Set<String> = []
    /// Options that take no value.
    var flags: Set<String> = []
    /// Most positional arguments accepted.
    var maximumPositionals = 0
    /// Short names for options (`-r` for `--recursive`).
    var aliases: [String: String] = [:]
}

/// A parsed command line.
struct Arguments {
    private var values: [String: [String]] = [:]
    private var flagsSeen: Set<String> = []
    private(set) var positionals: [String] = []

    /// Parses `arguments` against `spec`. `-` is a positional (standard input or output); `--` ends options.
    init(_ arguments: [String], spec: OptionSpec) throws(CommandFailure) {
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            var (name, inlineValue) = Self.split(argument)
            name = spec.aliases[name] ?? name
            if spec.flags.contains(name) {
                guard inlineValue == nil else { throw .usage("option \(name) takes no value") }
                flagsSeen.insert(name)
            } else if spec.valued.contains(name) {
                if let inlineValue {
                    values[name, default: []].append(inlineValue)
                } else {
                    guard index < arguments.count else { throw .usage("option \(name) needs a value") }
                    values[name, default: []].append(arguments[index])
                    index += 1
                }
            } else {
                throw .usage("unknown option \(name)")
            }
        }
        guard positionals.count <= spec.maximumPositionals else {
            throw .usage("unexpected argument \"\(positionals[spec.maximumPositionals])\"")
        }
    }

    func flag(_ name: String) -> Bool { flagsSeen.contains(name) }

    /// Every value given for a repeatable option, in order.
    func all(_ name: String) -> [String] { values[name] ?? [] }

    /// The value of an option that may be given at most once.
    func single(_ name: String) throws(CommandFailure) -> String? {
        let given = all(name)
        guard given.count <= 1 else { throw .usage("option \(name) may be given only once") }
        return given.first
    }

    private static func split(_ argument: String) -> (String, String?) {
        guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }
}
