import Foundation
import ReceiptLedger
import Testing

@testable import receipt

/// Long runs show how far they have come on standard error when it is a terminal, and never when it is not.
@Suite("Progress on a terminal")
struct ProgressTests {
    /// A scratch directory with a development chain and `count` signed receipts in `batch/`.
    func batch(_ count: Int) throws -> CLIRunner {
        let runner = try CLIRunner()
        let receipt = try runner.signValidReceipt()
        try FileManager.default.createDirectory(atPath: runner.path("batch"), withIntermediateDirectories: true)
        for index in 0..<count {
            try Data(receipt).write(to: URL(fileURLWithPath: runner.path("batch/\(index).der")))
        }
        return runner
    }

    /// Runs `receipt arguments…` with standard output and standard error on a pseudo-terminal (Python's `pty`), and
    /// returns everything the terminal showed.
    func onTerminal(_ runner: CLIRunner, _ arguments: [String]) throws -> String {
        let script = "import pty, sys; sys.exit(pty.spawn(sys.argv[1:]) >> 8)"
        let (program, prefix) = CLIRunner.python(["-c", script, CLIRunner.executable.path] + arguments)
        let result = try CLIRunner.run(program, prefix, in: runner.directory)
        #expect(result.status == 0, "\(result.standardError)")
        return result.output
    }

    @Test("receipt verify DIR on a terminal shows files done of the total, and clears it before any other text")
    func verifyOnTerminal() throws {
        let runner = try batch(3000)
        let arguments = ["verify", "batch", "--trust", "dev/root-ca.pem"]
        let shown = try onTerminal(runner, arguments)
        #expect(shown.contains("receipt verify: 1 of 3000 files"))
        let plain = try runner.run(arguments)
        let progress = /\r\u{1B}\[K(receipt verify: [0-9]+ of 3000 files[^\u{1B}\r\n]*)?/
        #expect(
            shown.replacing(progress, with: "").replacing("\r\n", with: "\n")
                == plain.output + plain.standardError,
            "without its progress lines, the terminal shows exactly what a pipe gets")
    }

    @Test("receipt verify DIR into a pipe writes no progress: standard error has the summary line only")
    func verifyIntoPipe() throws {
        let runner = try batch(50)
        let result = try runner.run(["verify", "batch", "--trust", "dev/root-ca.pem"])
        #expect(result.status == 0)
        #expect(result.standardError == "receipt verify: 50 files, 50 valid, 0 invalid, 0 unreadable, 0 skipped\n")
    }

    @Test("receipt ledger copy on a terminal shows the transactions copied of the total, and clears it")
    func ledgerCopyOnTerminal() throws {
        let runner = try CLIRunner()
        let source = try SQLiteLedger(path: runner.path("source.sqlite"))
        for id in 0..<300 { _ = try source.record(LedgerCommandTests.transaction(id)) }
        source.close()
        let shown = try onTerminal(runner, ["ledger", "copy", "source.sqlite", "target.sqlite"])
        #expect(shown.contains("receipt ledger copy: 1 of 300 transactions"))
        let progress = /\r\u{1B}\[K(receipt ledger copy: [0-9]+ of 300 transactions[^\u{1B}\r\n]*)?/
        let rest = shown.replacing(progress, with: "").replacing("\r\n", with: "\n")
        #expect(rest.hasPrefix("copied 300 transactions (300 new, 0 already there)"), "\(rest)")
    }

    @Test("a progress line says done, total, rate and time left")
    func line() {
        let progress = Progress(label: "receipt verify", unit: "files", total: 200, isTerminal: true)
        progress?.advance(by: 50)
        #expect(progress?.line(elapsed: 2) == "receipt verify: 50 of 200 files, 25/s, 6 s left")
        #expect(progress?.line(elapsed: 0) == "receipt verify: 50 of 200 files")
        let unknown = Progress(label: "copy", unit: "rows", total: nil, isTerminal: true)
        unknown?.advance(by: 10)
        #expect(unknown?.line(elapsed: 1) == "copy: 10 rows, 10/s")
        #expect(Progress(label: "x", unit: "y", total: 1, isTerminal: false) == nil)
    }

    @Test("time left reads as seconds, minutes or hours")
    func durations() {
        #expect(Progress.duration(0.2) == "1 s")
        #expect(Progress.duration(59) == "59 s")
        #expect(Progress.duration(185) == "3 min 5 s")
        #expect(Progress.duration(7440) == "2 h 4 min")
    }
}
