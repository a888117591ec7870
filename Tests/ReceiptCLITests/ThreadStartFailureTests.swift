import Foundation
import Testing

/// When the system makes no more threads, `receipt` does the work on the thread it has or says why it cannot,
/// never stopping with a trap.
///
/// Each test runs `receipt` under `prlimit` with a 64 GiB stack limit, which glibc takes as the size of every new
/// thread's stack, and a 4 GiB address-space limit, so that every `pthread_create` fails (EAGAIN) while the main
/// thread runs as usual.
@Suite("Commands when no thread can be started")
struct ThreadStartFailureTests {
    let runner: CLIRunner

    init() throws {
        runner = try CLIRunner()
        try runner.makeChainAndRequest()
        try FileManager.default.createDirectory(atPath: runner.path("receipts"), withIntermediateDirectories: true)
        for index in 1...4 {
            let signed = try runner.run(CLIRunner.signArguments + ["purchase.json", "-o", "receipts/\(index).der"])
            #expect(signed.status == 0, "\(signed.standardError)")
        }
        try runner.write(
            "service.json",
            #"{"listen":"127.0.0.1:0","environment":"Production","ledger":"ledger.sqlite","#
                + #""trust":["dev/root-ca.pem"],"#
                + #""signing":{"key":"dev/receipt-signer.key","certificate":"dev/receipt-signer.pem"}}"#)
    }

    /// Runs `receipt arguments…` where no thread can be started.
    func runWithoutThreads(_ arguments: [String]) throws -> CLIRunner.Result {
        try CLIRunner.run(
            URL(fileURLWithPath: "/usr/bin/prlimit"),
            ["--stack=68719476736", "--as=4294967296", CLIRunner.executable.path] + arguments,
            in: runner.directory)
    }

    @Test("verify of a directory runs on the calling thread and writes what it writes with threads")
    func verifyDirectoryWithoutThreads() throws {
        let arguments = ["verify", "receipts", "--trust", "dev/root-ca.pem"]
        let withThreads = try runner.run(arguments)
        let withoutThreads = try runWithoutThreads(arguments)
        #expect(withoutThreads.status == 0, "\(withoutThreads.standardError)")
        #expect(withoutThreads.output == withThreads.output)
        #expect(withoutThreads.output.contains("receipts/4.der: valid"))
    }

    @Test("serve stops at start with exit status 1 and the system's reason, before it listens")
    func serveWithoutThreads() throws {
        let result = try runWithoutThreads(["serve", "--config", "service.json"])
        #expect(result.status == 1, "\(result.standardError)")
        #expect(
            result.standardError.contains("could not start: cannot start a thread: Resource temporarily unavailable"),
            "\(result.standardError)")
        #expect(!result.standardError.contains("listening"))
    }
}
