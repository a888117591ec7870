import Dispatch
import Foundation
import HTTPServer
import ReceiptService
import StrictJSON
import Synchronization
import Testing

@testable import ReceiptLedger

@Suite("Writes answered once committed, without a thread waiting for them")
struct WriteAnswerTests {
    /// A response given to a responder, for the test to wait on.
    private final class Given: Sendable {
        private let response = Mutex<HTTPResponse?>(nil)
        private let arrived = DispatchSemaphore(value: 0)

        var responder: HTTPResponder {
            HTTPResponder { [self] make in
                response.withLock { $0 = make() }
                arrived.signal()
            }
        }

        /// Whether a response came within `seconds`.
        func wait(seconds: Int) -> Bool { arrived.wait(timeout: .now() + .seconds(seconds)) == .success }

        var status: Int? { response.withLock { $0?.status } }
    }

    /// A service over a new SQLite ledger in `directory` (created), logging to `logs`; the ledger's path.
    private func service(in directory: URL, logs: LogLines) throws -> (ReceiptService, SQLiteLedger, String) {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("ledger.sqlite").path
        let ledger = try SQLiteLedger(path: path)
        let service = try ReceiptService(
            configuration: ServiceConfiguration(
                environment: .production, ledgerPath: path, trustAnchors: [ServiceFixture.chain.root],
                tokens: [ServiceFixture.token]),
            ledger: ledger, log: { logs.append($0) })
        return (service, ledger, path)
    }

    /// A POST /v1/transactions with the service's token and `body`.
    private func recording(_ body: String) -> HTTPRequest {
        HTTPRequest(
            method: "POST", path: "/v1/transactions",
            headers: [(name: "authorization", value: "Bearer \(ServiceFixture.token)")], body: Array(body.utf8))
    }

    @Test(
        "on SQLite, POST /v1/transactions returns at once while the file is locked; its 201 and log line follow the commit"
    )
    func answeredAfterCommit() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("later-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let logs = LogLines()
        let (service, ledger, path) = try service(in: directory, logs: logs)
        defer { ledger.close() }
        let request = recording(TransactionsEndpointTests.body)

        let lock = try SQLiteDatabase(path: path)
        try lock.execute("BEGIN IMMEDIATE", purpose: "test: taking the write lock")
        guard case .later(let start) = service.answer(request) else {
            Issue.record("POST /v1/transactions was answered at once")
            return
        }
        let given = Given()
        start(given.responder)
        #expect(!given.wait(seconds: 1))
        #expect(logs.all.isEmpty)
        try lock.execute("ROLLBACK", purpose: "test: releasing the write lock")
        lock.close()

        #expect(given.wait(seconds: 10))
        #expect(given.status == 201)
        #expect(try ledger.transaction(id: "5001") != nil)
        let line = try #require(logs.all.first)
        #expect(try JSONValue(parsing: line)["status"] == .integer(201))
        #expect(try JSONValue(parsing: line)["route"] == .string("/v1/transactions"))
    }

    @Test("a request refused before its write is answered at once")
    func refusedAtOnce() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("later-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (service, ledger, _) = try service(in: directory, logs: LogLines())
        defer { ledger.close() }
        let request = recording("{}")
        guard case .response(let response) = service.answer(request) else {
            Issue.record("a body without its fields was not refused at once")
            return
        }
        #expect(response.status == 400)
    }
}
