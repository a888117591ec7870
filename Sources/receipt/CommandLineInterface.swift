/// Dispatches `receipt <command> …` and maps every failure to one exit status and one line on standard error.
enum CommandLineInterface {
    static let version = "0.1.0"

    /// Every command with every option it accepts; the README's usage block is this text.
    static let usage = """
        receipt \(version): sign, verify and serve App Store-format receipts and purchase proofs

        Usage:
          receipt verify [FILE|DIR|-]… --trust ANCHOR [--trust ANCHOR…] [--intermediate CA…] [--bundle-id ID]
                         [--app-version V] [--device-id UUID|MAC] [--at RFC3339] [--json] [-r|--recursive]
                         [--max-input-size N] [--max-depth N] [--max-purchases N] [--max-decompressed-size N]
          receipt sign --key KEY.pem --cert LEAF.pem [--chain CA.pem…] [FILE|-] [-o OUT] [--base64] [--compress]
                       [--format receipt|jws|notification]
          receipt inspect FILE|- [--json]
          receipt certs create DIR [--algorithm rsa|ec] [--profile standard|apple-compatible]
          receipt entitlements RECEIPT… --trust ANCHOR [--intermediate CA…] --catalog CATALOG.json
                               [--now RFC3339] [--bundle-id ID] [--json]
          receipt bench [--seconds S] [--rounds N] [--threads T] [--json]
          receipt serve --config FILE [--listen HOST:PORT]
          receipt ledger copy FROM TO [--connections N]
          receipt ledger check LOCATION [--connections N]
          receipt --version | --help

        These are all the options; 'receipt COMMAND --help' says what each one does.
        Exit status, for every command: 0 success (verify: every proof is valid), 1 the input was rejected (an
        invalid receipt, a bad request or configuration), 2 usage error, 3 a file could not be read or written.
        """

    static func run(_ arguments: [String]) -> ExitCode {
        guard let command = arguments.first else {
            Files.printError(usage)
            return .usage
        }
        let rest = Array(arguments.dropFirst())
        do {
            switch command {
            case "verify": try help(rest, VerifyCommand.help) ?? VerifyCommand.run(rest)
            case "sign": try help(rest, SignCommand.help) ?? SignCommand.run(rest)
            case "inspect": try help(rest, InspectCommand.help) ?? InspectCommand.run(rest)
            case "certs": try help(rest, CertsCommand.help) ?? CertsCommand.run(rest)
            case "entitlements": try help(rest, EntitlementsCommand.help) ?? EntitlementsCommand.run(rest)
            case "bench": try help(rest, BenchCommand.help) ?? BenchCommand.run(rest)
            case "serve": try help(rest, ServeCommand.help) ?? ServeCommand.run(rest)
            case "ledger": try help(rest, LedgerCommand.help) ?? LedgerCommand.run(rest)
            case "--help", "-h", "help":
                Files.writeStandardOutput(Array((usage + "\n").utf8))
            case "--version":
                Files.writeStandardOutput(Array("receipt \(version)\n".utf8))
            default:
                throw CommandFailure.usage("unknown command \"\(command)\"\n\n\(usage)")
            }
            return .success
        } catch let failure as CommandFailure {
            Files.printError("receipt \(command): \(failure.message)")
            if failure.exitCode == .usage && command != "--help" {
                Files.printError("Run 'receipt \(command) --help' for usage.")
            }
            return failure.exitCode
        } catch {
            Files.printError("receipt \(command): \(error)")
            return .rejected
        }
    }

    /// Prints `text` and returns `()` when `--help`/`-h` is among the arguments; nil otherwise.
    private static func help(_ arguments: [String], _ text: String) -> Void? {
        guard arguments.contains("--help") || arguments.contains("-h") else { return nil }
        Files.writeStandardOutput(Array((text + "\n").utf8))
        return ()
    }
}
