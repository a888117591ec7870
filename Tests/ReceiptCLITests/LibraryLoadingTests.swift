import Foundation
import Testing

/// SQLite, libpq and libmicrohttpd are opened when a command first needs them, not when `receipt` starts: every run
/// of the command would otherwise pay for loading them and their dependencies (Kerberos, LDAP, GnuTLS).
///
/// Each test puts files of their sonames that are no libraries at all first on the library path, so a library the
/// dynamic loader opened at start would stop the process before `main` (exit 127), and one opened later fails
/// with dlopen's words.
@Suite("Libraries opened at their first use")
struct LibraryLoadingTests {
    let runner: CLIRunner

    init() throws {
        runner = try CLIRunner()
    }

    /// An environment whose library path starts with a directory holding, under each of `sonames`, a file that is
    /// no library.
    func unusable(_ sonames: String...) throws -> [String: String] {
        let directory = "unusable-" + sonames.joined(separator: "-")
        try FileManager.default.createDirectory(atPath: runner.path(directory), withIntermediateDirectories: true)
        for soname in sonames { try runner.write("\(directory)/\(soname)", "") }
        return ["LD_LIBRARY_PATH": runner.path(directory)]
    }

    @Test("verify and sign run without SQLite, libpq and libmicrohttpd")
    func verifyWithoutServerLibraries() throws {
        let unusableLibraries = try unusable("libsqlite3.so.0", "libpq.so.5", "libmicrohttpd.so.12")
        try runner.makeChainAndRequest()
        let signed = try runner.run(
            CLIRunner.signArguments + ["purchase.json", "-o", "receipt.der"], environment: unusableLibraries)
        #expect(signed.status == 0, "\(signed.standardError)")
        let verified = try runner.run(
            ["verify", "receipt.der", "--trust", "dev/root-ca.pem"], environment: unusableLibraries)
        #expect(verified.status == 0, "\(verified.standardError)")
        #expect(verified.output.contains("valid"))
    }

    @Test("a ledger on PostgreSQL without a usable libpq is an input/output failure (3) naming libpq and the reason")
    func postgreSQLWithoutLibpq() throws {
        let unusableLibraries = try unusable("libpq.so.5")
        let result = try runner.run(
            ["ledger", "check", "postgresql://127.0.0.1:1/none"], environment: unusableLibraries)
        #expect(result.status == 3, "\(result.standardError)")
        #expect(result.standardError.contains("libpq could not be opened (install libpq5)"), "\(result.standardError)")
        #expect(result.standardError.contains("libpq.so.5: file too short"), "\(result.standardError)")
    }

    @Test("a ledger on SQLite without a usable libsqlite3 is an input/output failure (3) naming it and the reason")
    func sqliteWithoutLibsqlite3() throws {
        try runner.write("ledger.sqlite", "")
        let result = try runner.run(["ledger", "check", "ledger.sqlite"], environment: try unusable("libsqlite3.so.0"))
        #expect(result.status == 3, "\(result.standardError)")
        #expect(
            result.standardError.contains("SQLite could not be opened (install libsqlite3-0)"),
            "\(result.standardError)")
        #expect(result.standardError.contains("libsqlite3.so.0: file too short"), "\(result.standardError)")
    }

    @Test("serve without a usable libmicrohttpd stops at start naming it, its package and dlopen's reason")
    func serveWithoutLibmicrohttpd() throws {
        let unusableLibraries = try unusable("libmicrohttpd.so.12")
        try runner.makeChainAndRequest()
        try runner.write(
            "service.json",
            #"{"listen":"127.0.0.1:0","environment":"Production","ledger":"ledger.sqlite","#
                + #""trust":["dev/root-ca.pem"],"#
                + #""signing":{"key":"dev/receipt-signer.key","certificate":"dev/receipt-signer.pem"}}"#)
        let result = try runner.run(["serve", "--config", "service.json"], environment: unusableLibraries)
        #expect(result.status == 1, "\(result.standardError)")
        #expect(
            result.standardError.contains("libmicrohttpd could not be opened (install libmicrohttpd12)"),
            "\(result.standardError)")
        #expect(result.standardError.contains("libmicrohttpd.so.12: file too short"), "\(result.standardError)")
        #expect(!result.standardError.contains("listening"))
    }
}
