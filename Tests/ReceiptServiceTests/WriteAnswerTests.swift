import Dispatch
import Foundation
import HTTPServer
import PostgreSQLTestSupport
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

    /// Runs `body` with a service over a new SQLite ledger in a directory of its own, logging to `logs`, the
    /// ledger and its path; the ledger is closed and the directory removed afterwards.
    private func withService(
        logs: LogLines = LogLines(), _ body: (ReceiptService, SQLiteLedger, String) throws -> Void
    ) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("later-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("ledger.sqlite").path
        let ledger = try SQLiteLedger(path: path)
        defer { ledger.close() }
        let service = try ReceiptService(
            configuration: ServiceConfiguration(
                environment: .production, ledgerPath: path, trustAnchors: [ServiceFixture.chain.root],
                tokens: [ServiceFixture.token]),
            ledger: ledger, log: { logs.append($0) })
        try body(service, ledger, path)
    }

    /// A request with the service's token and `body`: by default POST /v1/transactions.
    private func recording(_ body: String, method: String = "POST", path: String = "/v1/transactions") -> HTTPRequest {
        HTTPRequest(
            method: method, path: path,
            headers: [(name: "authorization", value: "Bearer \(ServiceFixture.token)")], body: Array(body.utf8))
    }

    @Test(
        "on SQLite, POST /v1/transactions returns at once while the file is locked; its 201 and log line follow the commit"
    )
    func answeredAfterCommit() throws {
        let logs = LogLines()
        try withService(logs: logs) { service, ledger, path in
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
    }

    @Test("a request refused before its write is answered at once")
    func refusedAtOnce() throws {
        try withService { service, _, _ in
            let request = recording("{}")
            guard case .response(let response) = service.answer(request) else {
                Issue.record("a body without its fields was not refused at once")
                return
            }
            #expect(response.status == 400)
        }
    }

    @Test("POST /v1/receipts, whose handler waits for its commit, is answered by waiting, and its work answers")
    func waitingWriteAnsweredByWaiting() throws {
        let logs = LogLines()
        try withService(logs: logs) { service, _, _ in
            guard case .waiting(let work) = service.answer(recording("{}", path: "/v1/receipts")) else {
                Issue.record("POST /v1/receipts was not answered by waiting")
                return
            }
            #expect(logs.all.isEmpty)
            #expect(work().waitForResponse().status == 400)
            let line = try #require(logs.all.first)
            #expect(try JSONValue(parsing: line)["route"] == .string("/v1/receipts"))
        }
    }

    @Test("a method a waiting route does not take is answered at once with 405")
    func wrongMethodAnsweredAtOnce() throws {
        try withService { service, _, _ in
            guard case .response(let response) = service.answer(recording("{}", method: "PUT", path: "/v1/receipts"))
            else {
                Issue.record("PUT /v1/receipts was not answered at once")
                return
            }
            #expect(response.status == 405)
        }
    }

    @Test("with a ledger that commits on the calling thread (PostgreSQL), POST /v1/transactions is answered by waiting")
    func inlineLedgerWriteAnsweredByWaiting() throws {
        let uri = try PostgreSQLTestServer.shared().createDatabase()
        let ledger = try PostgreSQLLedger(uri: uri, connections: 1)
        defer { ledger.close() }
        let service = try ReceiptService(
            configuration: ServiceConfiguration(
                environment: .production, ledgerPath: uri, trustAnchors: [ServiceFixture.chain.root],
                tokens: [ServiceFixture.token]),
            ledger: ledger, log: { _ in })
        guard case .waiting(let work) = service.answer(recording(TransactionsEndpointTests.body)) else {
            Issue.record("POST /v1/transactions was not answered by waiting")
            return
        }
        #expect(work().waitForResponse().status == 201)
        #expect(try ledger.transaction(id: "5001") != nil)
    }
}
