import Foundation
import ReceiptLedger
import StrictJSON
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `receipt serve` as a real process: started from a configuration file, stopped by signals, killed.
final class ServeProcess: @unchecked Sendable {
    /// The `receipt` executable beside the test bundle.
    static let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("receipt")

    let process = Process()
    let errors = Pipe()
    private(set) var url = ""

    /// Starts `receipt serve --config configPath` (with more `arguments`) and waits for its "listening" line.
    convenience init(config configPath: String, arguments: [String] = []) throws {
        try self.init(program: Self.executable, arguments: ["serve", "--config", configPath] + arguments)
    }

    /// Starts `program` with `arguments` (a `receipt serve` command, possibly behind a wrapper such as `prlimit`)
    /// and waits for the server's "listening" line.
    init(program: URL, arguments: [String]) throws {
        process.executableURL = program
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        let line = try readLine()
        guard case .string(let url)? = try JSONValue(parsing: Array(line.utf8))["url"] else {
            throw FixtureError("unexpected first line: \(line)")
        }
        self.url = url
    }

    /// The next line the server writes to standard error.
    func readLine() throws -> String {
        var bytes: [UInt8] = []
        while true {
            let byte = errors.fileHandleForReading.readData(ofLength: 1)
            guard let first = byte.first else {
                throw FixtureError("receipt serve ended: \(String(decoding: bytes, as: UTF8.self))")
            }
            if first == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(first)
        }
    }

    func signal(_ signal: Int32) {
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
    }

    /// GETs `path`.
    func get(_ path: String) throws -> HTTPReply {
        guard let url = URL(string: url + path) else { throw FixtureError("bad URL \(path)") }
        return try HTTPReply.fetch(URLRequest(url: url))
    }

    /// POSTs `json` to `path` with the test token; the HTTP status, or nil when the request failed.
    func post(_ path: String, json: String) -> Int? {
        guard let url = URL(string: url + path) else { return nil }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.httpBody = Data(json.utf8)
        request.setValue("Bearer \(ServiceFixture.token)", forHTTPHeaderField: "Authorization")
        return (try? HTTPReply.fetch(request))?.status
    }
}

@Suite("receipt serve as a process")
struct ServeProcessTests {
    /// A configuration file over the development chain, listening on any free loopback port.
    func configFile(_ files: ConfigurationTests.Files, extra: String = "") throws -> String {
        let members = [
            #""listen":"127.0.0.1:0""#, #""environment":"Production""#, #""ledger":"ledger.sqlite""#,
            #""trust":["root.pem"]"#, #""signing":{"key":"signer.key","certificate":"signer.pem"}"#,
            #""tokens":["\#(ServiceFixture.token)"]"#,
        ]
        try files.write("config.json", "{\(members.joined(separator: ","))\(extra)}")
        return files.directory.appendingPathComponent("config.json").path
    }

    static func transaction(_ id: Int) -> String {
        #"{"customer_id":"c\#(id % 7)","bundle_id":"com.example.game","product_id":"com.example.coins","#
            + #""transaction_id":"\#(id)","purchase_date_ms":\#(1_717_200_000_000 + id)}"#
    }

    @Test("a bad configuration is refused at start with the key and the rule, and nothing listens")
    func badConfiguration() throws {
        let files = try ConfigurationTests.Files()
        let path = try configFile(files, extra: #","limits":{"threads":"many"}"#)
        let result = try CLIResult.run(ServeProcess.executable, ["serve", "--config", path])
        #expect(result.status == 1)
        #expect(result.error.contains("limits.threads: must be an integer"), "\(result.error)")
    }

    @Test(
        "an intermediate that cannot be read or is no certificate is refused at start naming the key and the file",
        arguments: [
            ("missing.pem", "intermediates[0]: cannot read "), ("catalog.json", "intermediates[0]: catalog.json: "),
        ])
    func badIntermediate(file: String, message: String) throws {
        let files = try ConfigurationTests.Files()
        let path = try configFile(files, extra: #","intermediates":["\#(file)"]"#)
        let result = try CLIResult.run(ServeProcess.executable, ["serve", "--config", path])
        #expect(result.status == 1)
        #expect(result.error.contains(message) && result.error.contains(file), "\(result.error)")
        #expect(!result.error.contains("listening"))
    }

    @Test("a configuration file that cannot be read is a file error, exit status 3")
    func unreadableConfiguration() throws {
        let files = try ConfigurationTests.Files()
        let missing = files.directory.appendingPathComponent("missing.json").path
        let result = try CLIResult.run(ServeProcess.executable, ["serve", "--config", missing])
        #expect(result.status == 3)
        #expect(result.error.contains("cannot read \(missing): no such file"), "\(result.error)")
    }

    @Test("more threads than connections is refused by its configuration key, not by a Swift type's name")
    func threadsAboveConnections() throws {
        let files = try ConfigurationTests.Files()
        let path = try configFile(files, extra: #","limits":{"threads":8,"max_connections":4}"#)
        let result = try CLIResult.run(ServeProcess.executable, ["serve", "--config", path])
        #expect(result.status == 1)
        #expect(result.error.contains("limits.threads: is 8, more than limits.max_connections (4)"), "\(result.error)")
        #expect(!result.error.contains("Error"))
    }

    @Test("--listen takes an IPv6 literal, and the listening line shows it as a URL")
    func listenIPv6() throws {
        let files = try ConfigurationTests.Files()
        let server = try ServeProcess(config: try configFile(files), arguments: ["--listen", "[::1]:0"])
        #expect(server.url.hasPrefix("http://[::1]:"))
        #expect(try ListenAddressTests().health(String(server.url.dropFirst("http://".count))) == 200)
        server.signal(SIGTERM)
        #expect(server.process.terminationStatus == 0)
    }

    @Test("SIGTERM stops the server gracefully: exit 0, a stopped line, and the ledger keeps what was recorded")
    func gracefulStop() throws {
        let files = try ConfigurationTests.Files()
        let path = try configFile(files)
        let server = try ServeProcess(config: path)
        #expect(server.post("/v1/transactions", json: Self.transaction(1)) == 201)
        server.signal(SIGTERM)
        #expect(server.process.terminationStatus == 0)
        #expect(try server.readLine().contains(#""event":"stopped""#))
        let ledger = try SQLiteLedger(path: files.directory.appendingPathComponent("ledger.sqlite").path)
        #expect(try ledger.count() == 1)
    }

    @Test("killed with SIGKILL mid-stream, the restarted server has every acknowledged transaction exactly once")
    func crashSafety() throws {
        let files = try ConfigurationTests.Files()
        let path = try configFile(files)
        let server = try ServeProcess(config: path)
        let ids = Acknowledged.killWhileWriting(server, writers: 4, total: .max, until: 300) { id in
            server.post("/v1/transactions", json: Self.transaction(id)) == 201
        }

        let restarted = try ServeProcess(config: path)
        for id in ids { #expect(restarted.post("/v1/transactions", json: Self.transaction(id)) == 200, "\(id)") }
        restarted.signal(SIGTERM)
        let ledger = try SQLiteLedger(path: files.directory.appendingPathComponent("ledger.sqlite").path)
        #expect(try ledger.integrityCheck() == ["ok"])
        var stored: [String] = []
        for customer in 0..<7 {
            stored += try ledger.transactions(customerID: "c\(customer)", bundleID: "com.example.game")
                .map(\.purchase.transactionID)
        }
        #expect(Set(stored).count == stored.count)
        #expect(Set(ids.map(String.init)).isSubset(of: Set(stored)))
        // At most the requests in flight when the process died were stored without being acknowledged.
        #expect(stored.count - ids.count <= 4)
    }
}

/// The transaction ids the server acknowledged, shared by the writer threads.
final class Acknowledged: @unchecked Sendable {
    private let lock = NSLock()
    private var acknowledged: [Int] = []
    private var running = true

    func add(_ id: Int) { lock.withLock { acknowledged.append(id) } }
    func stop() { lock.withLock { running = false } }
    var keepGoing: Bool { lock.withLock { running } }
    var count: Int { lock.withLock { acknowledged.count } }
    var ids: [Int] { lock.withLock { acknowledged } }

    /// Runs `writers` threads that share the indices `0..<total` (writer `w` takes `w`, `w + writers`, …), each
    /// calling `write` for one index after another; once `until` writes were acknowledged (`write` answered true)
    /// or 60 s have passed, kills `server` with SIGKILL, lets the writers end and returns the acknowledged indices.
    static func killWhileWriting(
        _ server: ServeProcess, writers: Int, total: Int, until: Int, write: @escaping @Sendable (Int) -> Bool
    ) -> [Int] {
        let acknowledged = Acknowledged()
        let group = DispatchGroup()
        for writer in 0..<writers {
            DispatchQueue.global().async(group: group) {
                var index = writer
                while acknowledged.keepGoing && index < total {
                    if write(index) { acknowledged.add(index) }
                    index += writers
                }
            }
        }
        let deadline = Date().addingTimeInterval(60)
        while acknowledged.count < until && Date() < deadline { usleep(1000) }
        server.signal(SIGKILL)
        acknowledged.stop()
        group.wait()
        return acknowledged.ids
    }
}

/// Runs a program to completion.
struct CLIResult {
    let status: Int32
    let error: String

    static func run(_ program: URL, _ arguments: [String]) throws -> CLIResult {
        let process = Process()
        process.executableURL = program
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let text = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CLIResult(status: process.terminationStatus, error: String(decoding: text, as: UTF8.self))
    }
}
