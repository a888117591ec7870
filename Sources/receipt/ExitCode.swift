/// The process exit status, the same for every command.
enum ExitCode: Int32 {
    /// The command did what was asked (for `verify`: the receipt is valid).
    case success = 0
    /// The input was rejected: an invalid receipt, a bad signing request, a key that does not match.
    case rejected = 1
    /// The command line itself is wrong: unknown option, missing argument, unparseable value.
    case usage = 2
    /// A file could not be read or written.
    case inputOutput = 3
}

/// A failure that ends a command, with the status it maps to and what to print on standard error.
struct CommandFailure: Error {
    let exitCode: ExitCode
    let message: String

    static func usage(_ message: String) -> CommandFailure { CommandFailure(exitCode: .usage, message: message) }
    static func io(_ message: String) -> CommandFailure { CommandFailure(exitCode: .inputOutput, message: message) }
    static func rejected(_ message: String) -> CommandFailure { CommandFailure(exitCode: .rejected, message: message) }
}
