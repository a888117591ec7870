import Foundation
import ReceiptModel
import ReceiptService
import StrictJSON
import Testing

/// An existing verifyReceipt client, the Python library itunes-iap from PyPI, talks to the service with nothing
/// changed but its URLs. It runs on the project's virtual environment, which `.ci/setup --tests` makes.
@Suite("An existing verifyReceipt client library works unchanged")
struct PythonClientTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Clients/itunesiap_client.py")
    /// `.venv/bin/python3` at the package root (this file is Tests/ReceiptServiceTests/PythonClientTests.swift).
    static let python = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent(".venv/bin/python3")

    /// Runs the client against the two services and returns what it printed.
    func runClient(production: ServiceFixture, sandbox: ServiceFixture, receipt: [UInt8]) throws -> JSONValue {
        guard FileManager.default.isExecutableFile(atPath: Self.python.path) else {
            throw FixtureError("no project Python at \(Self.python.path): run .ci/setup --tests")
        }
        let check = Process()
        check.executableURL = Self.python
        check.arguments = ["-c", "import itunesiap"]
        try check.run()
        check.waitUntilExit()
        guard check.terminationStatus == 0 else {
            throw FixtureError("the Python package itunes-iap is missing from .venv: run .ci/setup --tests")
        }
        let process = Process()
        process.executableURL = Self.python
        process.arguments = [
            Self.script.path, production.baseURL + "/verifyReceipt", sandbox.baseURL + "/verifyReceipt",
            Data(receipt).base64EncodedString(),
        ]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        let complaint = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw FixtureError("the client failed: \(String(decoding: complaint, as: UTF8.self))")
        }
        return try JSONValue(parsing: [UInt8](printed))
    }

    @Test("itunes-iap reads our answer for a production receipt: status, purchases, dates, no latest_receipt_info")
    func productionReceipt() throws {
        let production = try ServiceFixture()
        let sandbox = try ServiceFixture { $0.environment = .sandbox }
        let receipt = try ServiceFixture.signed(
            sampleReceipt(purchases: [("com.example.coins", "1001", 1), ("com.example.pro", "1002", 3)]))
        let answer = try runClient(production: production, sandbox: sandbox, receipt: receipt)
        #expect(answer["status"] == .integer(0))
        #expect(answer["bundle_id"] == .string("com.example.game"))
        #expect(answer["in_app"]?[0]?["purchase_date"] == .string("2024-06-02T00:00:00+00:00"))
        #expect(answer["in_app"]?[0]?["quantity"] == .integer(1))
        #expect(answer["latest_receipt_info"] == .null, "as Apple's, only subscriptions bring latest_receipt_info")
        #expect(answer["last_in_app"] == .string("com.example.pro"))
    }

    @Test("itunes-iap reads latest_receipt_info of a receipt with a subscription, in purchase order")
    func subscriptionReceipt() throws {
        let production = try ServiceFixture()
        let sandbox = try ServiceFixture { $0.environment = .sandbox }
        var subscribed = sampleReceipt(purchases: [("com.example.coins", "1001", 1), ("com.example.pro", "1002", 3)])
        subscribed.inAppPurchases[1].expiresDate = ReceiptDate(millisecondsSince1970: 1_720_000_000_000)
        let answer = try runClient(
            production: production, sandbox: sandbox, receipt: try ServiceFixture.signed(subscribed))
        #expect(answer["status"] == .integer(0))
        #expect(answer["latest_receipt_info"] == .array([.string("1001"), .string("1002")]))
    }

    @Test("a sandbox receipt gets 21007 from production, and the client retries the sandbox service as Apple advises")
    func sandboxFallback() throws {
        let production = try ServiceFixture()
        let sandbox = try ServiceFixture { $0.environment = .sandbox }
        let receipt = try ServiceFixture.signed(
            sampleReceipt(type: "ProductionSandbox", purchases: [("com.example.pro", "7", 0)]))
        let answer = try runClient(production: production, sandbox: sandbox, receipt: receipt)
        #expect(answer["status"] == .integer(0))
        #expect(answer["last_in_app"] == .string("com.example.pro"))
        #expect(production.logs.all.count == 1)
        #expect(sandbox.logs.all.count == 1)
    }

    @Test("a forged receipt makes the client raise InvalidReceipt with status 21003")
    func forgedReceipt() throws {
        let production = try ServiceFixture()
        let sandbox = try ServiceFixture { $0.environment = .sandbox }
        var receipt = try ServiceFixture.signed(sampleReceipt(purchases: [("com.example.pro", "7", 0)]))
        receipt[receipt.count - 10] ^= 0x01
        let answer = try runClient(production: production, sandbox: sandbox, receipt: receipt)
        #expect(answer["error_status"] == .integer(21003))
    }
}

extension JSONValue {
    /// The element at `index` when this is an array.
    subscript(index: Int) -> JSONValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }
}
