import Foundation
import Testing

@testable import receipt

/// `receipt --help` lists every command with every option it accepts, and the README shows the same text.
@Suite("Usage text")
struct UsageTests {
    static let commands: [(name: String, options: OptionSpec, help: String)] = [
        ("verify", VerifyCommand.options, VerifyCommand.help), ("sign", SignCommand.options, SignCommand.help),
        ("inspect", InspectCommand.options, InspectCommand.help), ("certs", CertsCommand.options, CertsCommand.help),
        ("entitlements", EntitlementsCommand.options, EntitlementsCommand.help),
        ("bench", BenchCommand.options, BenchCommand.help), ("serve", ServeCommand.options, ServeCommand.help),
        ("ledger", LedgerCommand.options, LedgerCommand.help),
    ]

    /// The lines of `receipt --help` that describe `command`: its synopsis and the lines that continue it.
    static func synopsis(of command: String) -> String {
        var lines: [Substring] = []
        for line in CommandLineInterface.usage.split(separator: "\n") {
            if line.hasPrefix("  receipt \(command) ") {
                lines.append(line)
            } else if !lines.isEmpty, line.hasPrefix("   ") {
                lines.append(line)
            } else if !lines.isEmpty {
                break
            }
        }
        return lines.joined(separator: "\n")
    }

    static func names(_ options: OptionSpec) -> [String] {
        (options.valued.union(options.flags).union(options.aliases.keys)).sorted()
    }

    @Test("every option of every command is in receipt --help and in the command's own --help", arguments: commands)
    func everyOptionListed(command: (name: String, options: OptionSpec, help: String)) {
        let synopsis = Self.synopsis(of: command.name)
        #expect(!synopsis.isEmpty)
        for option in Self.names(command.options) {
            #expect(synopsis.contains(option), "receipt --help lacks \(option) for \(command.name)")
            #expect(command.help.contains(option), "receipt \(command.name) --help lacks \(option)")
        }
    }

    @Test("receipt --help prints the usage text, which says that COMMAND --help explains every option")
    func helpOutput() throws {
        let result = try CLIRunner().run(["--help"])
        #expect(result.status == 0)
        #expect(result.output == CommandLineInterface.usage + "\n")
        #expect(result.output.contains("These are all the options; 'receipt COMMAND --help' says what each one does."))
    }

    @Test("the README's usage block is exactly what receipt --help prints")
    func readmeUsageBlock() throws {
        let readme = DocumentationTests.readme
        let heading = try #require(readme.range(of: "## The `receipt` command\n\n```\n"))
        let end = try #require(readme.range(of: "```\n", range: heading.upperBound..<readme.endIndex))
        #expect(String(readme[heading.upperBound..<end.lowerBound]) == CommandLineInterface.usage + "\n")
    }
}
