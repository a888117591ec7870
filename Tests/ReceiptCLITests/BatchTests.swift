import Foundation
import Testing

/// `receipt verify DIR` fails closed: a batch that verifies nothing is an error, what is skipped is counted, and
/// the summary always goes to standard error.
@Suite("receipt verify over a directory")
struct BatchTests {
    /// A scratch directory with a development chain and a signed receipt `valid.der`.
    func runnerWithReceipt() throws -> (CLIRunner, [UInt8]) {
        let runner = try CLIRunner()
        return (runner, try runner.signValidReceipt())
    }

    func makeDirectory(_ runner: CLIRunner, _ path: String) throws {
        try FileManager.default.createDirectory(atPath: runner.path(path), withIntermediateDirectories: true)
    }

    func verify(_ runner: CLIRunner, _ arguments: [String]) throws -> CLIRunner.Result {
        try runner.run(["verify"] + arguments + ["--trust", "dev/root-ca.pem"])
    }

    /// The files named at the start of each output line, in order.
    func files(_ result: CLIRunner.Result) -> [String] {
        result.output.split(separator: "\n").map { String($0.prefix { $0 != ":" }) }
    }

    @Test("an empty directory is an error: exit 1, no files to verify in DIR")
    func emptyDirectory() throws {
        let (runner, _) = try runnerWithReceipt()
        try makeDirectory(runner, "empty")
        let result = try verify(runner, ["empty"])
        #expect(result.status == 1)
        #expect(result.output.isEmpty)
        #expect(result.standardError.contains("no files to verify in empty"))
    }

    @Test("a directory holding only subdirectories is an error that says they were skipped")
    func onlySubdirectories() throws {
        let (runner, receipt) = try runnerWithReceipt()
        try makeDirectory(runner, "tree/inner")
        try Data(receipt).write(to: URL(fileURLWithPath: runner.path("tree/inner/a.der")))
        let result = try verify(runner, ["tree"])
        #expect(result.status == 1)
        #expect(result.standardError.contains("no files to verify in tree"))
        #expect(result.standardError.contains("1 subdirectory not entered without --recursive"))
    }

    @Test("--recursive and -r descend into subdirectories, sorted by name, depth first")
    func recursive() throws {
        let (runner, receipt) = try runnerWithReceipt()
        try makeDirectory(runner, "tree/m/deeper")
        for name in ["tree/z.der", "tree/a.der", "tree/m/b.der", "tree/m/deeper/c.der", "tree/m/n.der"] {
            try Data(receipt).write(to: URL(fileURLWithPath: runner.path(name)))
        }
        let expected = ["tree/a.der", "tree/m/b.der", "tree/m/deeper/c.der", "tree/m/n.der", "tree/z.der"]
        for flag in ["--recursive", "-r"] {
            let result = try verify(runner, ["tree", flag])
            #expect(result.status == 0)
            #expect(files(result) == expected)
            #expect(result.standardError.contains("5 files, 5 valid, 0 invalid, 0 unreadable, 0 skipped"))
        }
    }

    @Test("without --recursive, subdirectories are skipped and counted in the summary")
    func subdirectoriesCounted() throws {
        let (runner, receipt) = try runnerWithReceipt()
        try makeDirectory(runner, "tree/one")
        try makeDirectory(runner, "tree/two")
        try Data(receipt).write(to: URL(fileURLWithPath: runner.path("tree/a.der")))
        let result = try verify(runner, ["tree"])
        #expect(result.status == 0)
        #expect(files(result) == ["tree/a.der"])
        #expect(
            result.standardError.contains(
                "1 file, 1 valid, 0 invalid, 0 unreadable, 2 skipped: 2 subdirectories not entered without --recursive")
        )
    }

    @Test("symbolic links inside a directory are not followed, even with --recursive; they are counted as skipped")
    func linksNotFollowed() throws {
        let (runner, receipt) = try runnerWithReceipt()
        try makeDirectory(runner, "tree/inner")
        try makeDirectory(runner, "elsewhere")
        try Data(receipt).write(to: URL(fileURLWithPath: runner.path("tree/inner/a.der")))
        try Data(receipt).write(to: URL(fileURLWithPath: runner.path("elsewhere/b.der")))
        try FileManager.default.createSymbolicLink(atPath: runner.path("tree/loop"), withDestinationPath: "..")
        try FileManager.default.createSymbolicLink(
            atPath: runner.path("tree/linked.der"), withDestinationPath: runner.path("elsewhere/b.der"))
        let result = try verify(runner, ["tree", "-r"])
        #expect(result.status == 0)
        #expect(files(result) == ["tree/inner/a.der"])
        #expect(result.standardError.contains("1 file, 1 valid, 0 invalid, 0 unreadable, 2 skipped"))
    }

    @Test("the summary goes to standard error also when every receipt is valid, and output stays one line per file")
    func summaryWhenAllValid() throws {
        let (runner, receipt) = try runnerWithReceipt()
        try makeDirectory(runner, "tree")
        for name in ["a", "b"] { try Data(receipt).write(to: URL(fileURLWithPath: runner.path("tree/\(name).der"))) }
        let result = try runner.run(["verify", "tree", "--trust", "dev/root-ca.pem", "--json"])
        #expect(result.status == 0)
        #expect(result.output.split(separator: "\n").count == 2)
        #expect(result.standardError == "receipt verify: 2 files, 2 valid, 0 invalid, 0 unreadable, 0 skipped\n")
    }

    @Test("the summary counts invalid and unreadable files, and the exit status is the worst outcome")
    func summaryWithFailures() throws {
        let (runner, receipt) = try runnerWithReceipt()
        try runner.write("junk.der", "not a receipt")
        let invalid = try verify(runner, ["valid.der", "junk.der"])
        #expect(invalid.status == 1)
        #expect(invalid.standardError.contains("2 files, 1 valid, 1 invalid, 0 unreadable, 0 skipped"))
        let unreadable = try verify(runner, ["valid.der", "junk.der", "missing.der"])
        #expect(unreadable.status == 3)
        #expect(unreadable.standardError.contains("3 files, 1 valid, 1 invalid, 1 unreadable, 0 skipped"))
        #expect(receipt.count > 0)
    }

    @Test("the real receipts' folder verifies every receipt below it only with --recursive")
    func realVectorsFolder() throws {
        let real = CLIRunner.packageRoot.appendingPathComponent("Tests/ReceiptVerifierTests/Vectors/real").path
        let runner = try CLIRunner()
        let apple = CLIRunner.packageRoot.appendingPathComponent("certs/apple/AppleIncRootCertificate.cer").path
        let flat = try runner.run(["verify", real, "--trust", apple])
        #expect(flat.standardError.contains("2 files, 0 valid, 2 invalid"))
        let recursive = try runner.run(["verify", real, "-r", "--trust", apple])
        let valid = recursive.output.split(separator: "\n").filter { $0.contains(": valid: ") }
        #expect(valid.count >= 18, "\(recursive.standardError)")
        #expect(
            recursive.output.contains("/revenuecat/base64encodedreceiptsample1.der: valid: com.revenuecat.sampleapp"))
    }

    /// The error code of each JSON line of `result`, keyed by file ("" for a valid one).
    func codes(_ result: CLIRunner.Result) throws -> [String: String] {
        var codes: [String: String] = [:]
        for line in result.output.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let file = try #require(object["file"] as? String)
            codes[file] = (object["error"] as? [String: Any])?["code"] as? String ?? ""
        }
        return codes
    }

    @Test("a file of a directory larger than one read (64 KiB) is read whole, and one byte over the limit is too large")
    func filesLargerThanOneRead() throws {
        let runner = try CLIRunner()
        try runner.makeChainAndRequest(algorithm: "ec")
        let purchases = (0..<1200).map { index in
            "{\"product_id\": \"com.example.coins100\", \"transaction_id\": \"\(3_000_000_000_000_000 + index)\", "
                + "\"purchase_date\": \"2024-06-01T10:00:00Z\"}"
        }
        try runner.write(
            "big.json",
            "{\"bundle_id\": \"com.example.game\", \"receipt_creation_date\": \"2024-06-05T12:00:00Z\", "
                + "\"in_app\": [\(purchases.joined(separator: ", "))]}")
        try makeDirectory(runner, "tree")
        #expect(try runner.run(CLIRunner.signArguments + ["big.json", "-o", "tree/big.der"]).status == 0)
        let size = try runner.read("tree/big.der").count
        #expect(size > 1 << 17, "a receipt of \(size) bytes takes more than two reads")
        try runner.write("tree/exact.der", String(repeating: "A", count: 1 << 16))
        try runner.write("tree/over.der", String(repeating: "A", count: 1 << 16 + 1))

        let whole = try verify(runner, ["tree", "--json"])
        #expect(try codes(whole) == ["tree/big.der": "", "tree/exact.der": "malformed", "tree/over.der": "malformed"])
        #expect(whole.output.contains("\"transaction_id\":\"3000000000001199\""))
        let limited = try verify(runner, ["tree", "--json", "--max-input-size", "\(1 << 16)"])
        #expect(
            try codes(limited) == [
                "tree/big.der": "too_large", "tree/exact.der": "malformed", "tree/over.der": "too_large",
            ])
        let atSize = try verify(runner, ["tree", "--json", "--max-input-size", "\(size)"])
        #expect(try codes(atSize)["tree/big.der"] == "")
        let belowSize = try verify(runner, ["tree", "--json", "--max-input-size", "\(size - 1)"])
        #expect(try codes(belowSize)["tree/big.der"] == "too_large")
    }

    /// Gives `path` an access time older than its modification time, which the first read updates on a file system
    /// mounted with Linux's default relatime, and returns that access time.
    func ageAccessTime(_ runner: CLIRunner, _ path: String) -> Int {
        var times = [timespec(tv_sec: 946_684_800, tv_nsec: 0), timespec(tv_sec: time(nil), tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, runner.path(path), &times, 0) == 0)
        return accessTime(runner, path)
    }

    func accessTime(_ runner: CLIRunner, _ path: String) -> Int {
        var status = stat()
        #expect(stat(runner.path(path), &status) == 0)
        return status.st_atim.tv_sec
    }

    @Test("verifying files leaves their access times as they were, a directory's files and a file named alike")
    func accessTimesUnchanged() throws {
        let (runner, receipt) = try runnerWithReceipt()
        try makeDirectory(runner, "tree")
        for name in ["tree/a.der", "tree/b.der", "control.der"] {
            try Data(receipt).write(to: URL(fileURLWithPath: runner.path(name)))
        }
        let aged = ["tree/a.der", "tree/b.der", "valid.der", "control.der"].map { ageAccessTime(runner, $0) }
        _ = try runner.read("control.der")
        try #require(
            accessTime(runner, "control.der") != aged[3],
            "this file system does not update access times on reading (mounted noatime?), so the test cannot tell")
        #expect(try verify(runner, ["tree"]).status == 0)
        #expect(try verify(runner, ["valid.der"]).status == 0)
        #expect(["tree/a.der", "tree/b.der", "valid.der"].map { accessTime(runner, $0) } == Array(aged[..<3]))
    }

    @Test(
        "files another user owns are read all the same by a process that may not leave their access times alone",
        .enabled(if: getuid() == 0, "giving files to another user (chown) takes root"))
    func accessTimesOfAnotherUsersFiles() throws {
        let (runner, receipt) = try runnerWithReceipt()
        try makeDirectory(runner, "tree")
        for name in ["tree/a.der", "tree/b.der"] {
            try Data(receipt).write(to: URL(fileURLWithPath: runner.path(name)))
        }
        for name in ["tree/a.der", "tree/b.der", "valid.der"] {
            #expect(chown(runner.path(name), 65534, 65534) == 0)
        }
        // Root without CAP_FOWNER: Linux refuses O_NOATIME on files it does not own (EPERM), not reading them.
        let withoutFileOwnerCapability = [
            "--inh-caps=-fowner", "--bounding-set=-fowner", "--", CLIRunner.executable.path,
        ]
        let result = try CLIRunner.run(
            URL(fileURLWithPath: "/usr/bin/setpriv"),
            withoutFileOwnerCapability + ["verify", "tree", "valid.der", "--trust", "dev/root-ca.pem"],
            in: runner.directory)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("3 files, 3 valid, 0 invalid, 0 unreadable"))
    }

    @Test("ASCII names are verified in the order Swift sorts them, however long the prefix they share")
    func asciiNamesInStringOrder() throws {
        let (runner, receipt) = try runnerWithReceipt()
        try makeDirectory(runner, "tree")
        let names = [
            "receipt-10.der", "receipt-9.der", "receipt-100.der", "Z.der", "a.der", "receipt.der", "receipt-1.der",
            "receipt-10", "b", "receipt-10.der~",
        ]
        for name in names {
            try Data(receipt).write(to: URL(fileURLWithPath: runner.path("tree/\(name)")))
        }
        let result = try verify(runner, ["tree"])
        #expect(result.status == 0)
        #expect(files(result) == names.sorted().map { "tree/\($0)" })
    }

    @Test("a name that is not UTF-8 is skipped and counted; other names, UTF-8 beyond ASCII too, are verified in order")
    func namesThatAreNotUTF8() throws {
        let (runner, receipt) = try runnerWithReceipt()
        try makeDirectory(runner, "tree")
        for name in ["b.der", "é.der", "a.der"] {
            try Data(receipt).write(to: URL(fileURLWithPath: runner.path("tree/\(name)")))
        }
        let invalidName = Array(runner.path("tree").utf8) + Array("/".utf8) + [0xFF, 0xFE] + Array(".der".utf8)
        let descriptor = (invalidName.map { CChar(bitPattern: $0) } + [0]).withUnsafeBufferPointer {
            open($0.baseAddress!, O_CREAT | O_WRONLY, 0o644)
        }
        #expect(descriptor >= 0)
        close(descriptor)
        let result = try verify(runner, ["tree"])
        #expect(result.status == 0)
        #expect(files(result) == ["tree/a.der", "tree/b.der", "tree/é.der"])
        #expect(result.standardError.contains("3 files, 3 valid, 0 invalid, 0 unreadable, 1 skipped"))
    }
}
