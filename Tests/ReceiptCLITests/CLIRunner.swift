import Foundation

/// Runs the built `receipt` binary as a real process.
struct CLIRunner {
    struct Result {
        let status: Int32
        let standardOutput: [UInt8]
        let standardError: String

        var output: String { String(decoding: standardOutput, as: UTF8.self) }
    }

    /// A set-up command that did not succeed: which one, its status and what it printed on standard error.
    struct SetupFailure: Error, CustomStringConvertible {
        let arguments: [String]
        let result: Result

        var description: String {
            "receipt \(arguments.joined(separator: " ")) exited \(result.status): \(result.standardError)"
        }
    }

    /// Runs `arguments` as a set-up step; throws ``SetupFailure`` unless it exits 0.
    func setUp(_ arguments: [String]) throws {
        let result = try run(arguments)
        guard result.status == 0 else { throw SetupFailure(arguments: arguments, result: result) }
    }

    /// The `receipt` executable beside the test bundle (both live in the build products directory).
    static let executable: URL = URL(fileURLWithPath: CommandLine.arguments[0])
        .deletingLastPathComponent().appendingPathComponent("receipt")

    /// The package's root directory, for committed files such as `certs/`.
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// How to run a Python script that needs only the standard library: on the project's virtual environment
    /// (`.venv/bin/python3`, made by `.ci/setup --tests`) when there is one, otherwise on the first `python3` on
    /// PATH (Debian's own will do).
    static func python(_ arguments: [String]) -> (program: URL, arguments: [String]) {
        let venv = packageRoot.appendingPathComponent(".venv/bin/python3")
        if FileManager.default.isExecutableFile(atPath: venv.path) { return (venv, arguments) }
        return (URL(fileURLWithPath: "/usr/bin/env"), ["python3"] + arguments)
    }

    let directory: URL

    /// A fresh scratch directory for one test.
    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("receipt-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    func write(_ name: String, _ text: String) throws {
        try Data(text.utf8).write(to: directory.appendingPathComponent(name))
    }

    func read(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    func exists(_ name: String) -> Bool { FileManager.default.fileExists(atPath: path(name)) }

    /// Runs `receipt arguments…` in the scratch directory, feeding `input` to standard input, with `environment`
    /// added to the test's own.
    @discardableResult
    func run(_ arguments: [String], input: [UInt8] = [], environment: [String: String] = [:]) throws -> Result {
        try Self.run(Self.executable, arguments, in: directory, input: input, environment: environment)
    }

    /// Runs any program (used for `openssl`), with `environment` added to the test's own.
    static func run(
        _ program: URL, _ arguments: [String], in directory: URL, input: [UInt8] = [],
        environment: [String: String] = [:]
    ) throws -> Result {
        let process = Process()
        process.executableURL = program
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(Data(input))
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let error = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, standardOutput: Array(output),
            standardError: String(decoding: error, as: UTF8.self))
    }

    /// `receipt certs create dev` and a purchase request.
    func makeChainAndRequest(algorithm: String = "rsa", request: String = CLIRunner.request) throws {
        try setUp(["certs", "create", "dev", "--algorithm", algorithm])
        try write("purchase.json", request)
    }

    /// `receipt certs create dev --algorithm ec`, a purchase request, and `valid.der` signed from them: the
    /// receipt's bytes.
    @discardableResult
    func signValidReceipt() throws -> [UInt8] {
        try makeChainAndRequest(algorithm: "ec")
        try setUp(Self.signArguments + ["purchase.json", "-o", "valid.der"])
        return try read("valid.der")
    }

    static let signArguments = [
        "sign", "--key", "dev/receipt-signer.key", "--cert", "dev/receipt-signer.pem", "--chain",
        "dev/intermediate-ca.pem",
    ]

    static let request = """
        {
          "bundle_id": "com.example.game",
          "application_version": "42",
          "receipt_type": "ProductionSandbox",
          "receipt_creation_date": "2024-06-05T12:00:00Z",
          "device_id": "956328D9-CC6A-47F4-BE40-6953FB0AB6C7",
          "in_app": [
            {"product_id": "com.example.pro.monthly", "transaction_id": "2000000000000002",
             "original_transaction_id": "2000000000000001", "purchase_date": "2024-06-01T09:00:00Z",
             "expires_date_ms": "1719824400000", "web_order_line_item_id": 2000000123357229,
             "is_trial_period": false, "is_in_intro_offer_period": "true"},
            {"product_id": "com.example.coins100", "transaction_id": "2000000000000003",
             "purchase_date": "2024-06-04 18:30:00 Etc/GMT", "quantity": 3}
          ]
        }
        """
}
