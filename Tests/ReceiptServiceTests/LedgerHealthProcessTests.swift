import Foundation
import ReceiptLedger
import StrictJSON
import Testing

/// A ledger that cannot take writes is found out: refused at start, and reported by `/healthz` while running.
@Suite("receipt serve over a ledger that cannot take writes")
struct LedgerHealthProcessTests {
    /// A directory anyone may write to, holding the development root and a configuration without signing keys
    /// (so that an unprivileged user can read everything the server needs).
    final class Files {
        let directory: URL

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("health-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            chmod(directory.path, 0o777)
            try Data(ServiceFixture.chain.root.pemEncoded.utf8).write(to: directory.appendingPathComponent("root.pem"))
            let config =
                #"{"listen":"127.0.0.1:0","environment":"Production","ledger":"ledger.sqlite","trust":["root.pem"],"#
                + #""tokens":["\#(ServiceFixture.token)"]}"#
            try Data(config.utf8).write(to: directory.appendingPathComponent("config.json"))
        }

        deinit { try? FileManager.default.removeItem(at: directory) }

        var config: String { directory.appendingPathComponent("config.json").path }
        var ledger: String { directory.appendingPathComponent("ledger.sqlite").path }
    }

    @Test("a ledger file this process may not write (its directory writable) is refused at start, exit status 3")
    func readOnlyLedgerRefused() throws {
        let files = try Files()
        try SQLiteLedger(path: files.ledger).close()
        chmod(files.ledger, 0o444)
        // Root may write any file, so the server runs as nobody when the tests run as root.
        let program: URL
        let arguments: [String]
        if getuid() == 0 {
            program = URL(fileURLWithPath: "/usr/bin/setpriv")
            arguments = [
                "--reuid=65534", "--regid=65534", "--clear-groups", ServeProcess.executable.path, "serve", "--config",
                files.config,
            ]
        } else {
            program = ServeProcess.executable
            arguments = ["serve", "--config", files.config]
        }
        let result = try CLIResult.run(program, arguments)
        #expect(result.status == 3, "\(result.error)")
        #expect(result.error.contains("is read-only for this process"), "\(result.error)")
    }

    @Test("when a write fails for want of space, /healthz answers 503 with the reason until a write succeeds")
    func failedWriteReported() throws {
        let files = try Files()
        // RLIMIT_FSIZE makes every write past 96 KiB fail, as a full disk would; the server ignores SIGXFSZ.
        let server = try ServeProcess(
            program: URL(fileURLWithPath: "/usr/bin/prlimit"),
            arguments: ["--fsize=98304", ServeProcess.executable.path, "serve", "--config", files.config])
        defer { server.signal(SIGTERM) }
        #expect(try server.get("/healthz").status == 200)
        var failed = false
        for id in 0..<2000 where !failed {
            failed = server.post("/v1/transactions", json: ServeProcessTests.transaction(id)) == 503
        }
        #expect(failed, "no write failed under a 96 KiB file-size limit")
        let health = try server.get("/healthz")
        #expect(health.status == 503)
        #expect(health.errorCode == "ledger_unavailable")
        #expect(health.text.contains("the ledger cannot take writes: "), "\(health.text)")
        #expect(!health.text.contains("transaction"), "the reason names nothing stored: \(health.text)")
    }
}
