import Foundation
import HTTPServer
import ReceiptLedger
import ReceiptService
import StrictJSON
import Testing

@Suite("Health, metrics, logs and limits")
struct OperationsTests {
    @Test("GET /healthz answers ok with the ledger's size")
    func health() throws {
        let reply = try ServiceFixture().send("GET", "/healthz", token: nil)
        #expect(reply.status == 200)
        #expect(try reply.json() == .object(JSONObject(["status": .string("ok"), "ledger_transactions": .integer(0)])))
    }

    @Test("GET /metrics counts requests by route and status, verifications by outcome, and the ledger's size")
    func metrics() throws {
        let fixture = try ServiceFixture()
        _ = try fixture.post("/verifyReceipt", json: #"{"receipt-data":"MIIBAAAA"}"#)
        _ = try fixture.post("/v1/transactions", json: TransactionsEndpointTests.body)
        _ = try fixture.send("GET", "/nowhere")
        let reply = try fixture.send("GET", "/metrics", token: nil)
        #expect(reply.status == 200)
        #expect(reply.headers["content-type"]?.hasPrefix("text/plain") == true)
        let lines = Set(reply.text.split(separator: "\n").map(String.init))
        for expected in [
            #"receipt_http_requests_total{route="/verifyReceipt",status="200"} 1"#,
            #"receipt_http_requests_total{route="/v1/transactions",status="201"} 1"#,
            #"receipt_http_requests_total{route="other",status="404"} 1"#,
            #"receipt_verifications_total{outcome="malformed"} 1"#,
            #"receipt_http_request_duration_seconds_count{route="/verifyReceipt"} 1"#,
            #"receipt_http_request_duration_seconds_bucket{route="/verifyReceipt",le="+Inf"} 1"#,
            "receipt_ledger_transactions 1",
            "# TYPE receipt_http_request_duration_seconds histogram",
        ] {
            #expect(lines.contains(expected), "missing \(expected)")
        }
    }

    @Test("an unknown path is a 404 JSON error")
    func notFound() throws {
        let reply = try ServiceFixture().send("GET", "/v2/anything")
        #expect(reply.status == 404)
        #expect(reply.errorCode == "not_found")
    }

    @Test(
        "a path is split at every slash: a trailing or doubled slash makes another path, an empty parameter is refused",
        arguments: [
            ("/verifyReceipt/", 404, "not_found"), ("//verifyReceipt", 404, "not_found"),
            ("/v1/customers/c1/receipt/", 404, "not_found"), ("/v1/customers//receipt", 400, "invalid_request"),
            ("/v1/transactions", 405, "method_not_allowed"),
        ])
    func pathSegments(path: String, status: Int, code: String) throws {
        let reply = try ServiceFixture().send("GET", path)
        #expect(reply.status == status, "\(path)")
        #expect(reply.errorCode == code, "\(path)")
    }

    @Test("a body over the configured limit is a 413 before it is read")
    func bodyLimit() throws {
        let fixture = try ServiceFixture { $0.maximumBodyBytes = 4096 }
        let reply = try fixture.send("POST", "/verifyReceipt", body: [UInt8](repeating: 0x41, count: 5000))
        #expect(reply.status == 413)
        #expect(reply.errorCode == "body_too_large")
    }

    @Test("each request is logged as one JSON line without receipt contents, tokens or customer ids")
    func logs() throws {
        let fixture = try ServiceFixture()
        let receipt = try ServiceFixture.signed(sampleReceipt(purchases: [("com.example.pro", "1", 0)]))
        _ = try fixture.post("/verifyReceipt", json: ServiceFixture.verifyRequest(receipt))
        _ = try fixture.send("GET", "/v1/customers/secret-customer/receipt?bundle_id=b")
        let lines = fixture.logs.all
        #expect(lines.count == 2)
        for line in lines {
            let json = try JSONValue(parsing: line)
            #expect(json["method"] != nil && json["route"] != nil && json["status"] != nil)
            #expect(!line.contains(String(Data(receipt).base64EncodedString().prefix(40))))
            #expect(!line.contains(ServiceFixture.token))
            #expect(!line.contains("secret-customer"))
        }
        #expect(try JSONValue(parsing: lines[1])["route"] == .string("/v1/customers/{customer_id}/receipt"))
    }
}

@Suite("When the ledger cannot be used")
struct LedgerUnavailableTests {
    /// A service over a ledger that has been closed, answering requests directly.
    func service() throws -> (ReceiptService, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("closed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let ledger = try SQLiteLedger(path: directory.appendingPathComponent("ledger.sqlite").path)
        ledger.close()
        let configuration = ServiceConfiguration(
            environment: .production, ledgerPath: "", trustAnchors: [ServiceFixture.chain.root],
            tokens: [ServiceFixture.token])
        return (try ReceiptService(configuration: configuration, ledger: ledger), directory)
    }

    @Test("health, writes and reads answer 503 ledger_unavailable, and verifyReceipt answers status 21009")
    func unavailable() throws {
        let (service, directory) = try service()
        defer { try? FileManager.default.removeItem(at: directory) }
        let authorization = [(name: "authorization", value: "Bearer \(ServiceFixture.token)")]
        let health = service.handle(HTTPRequest(method: "GET", path: "/healthz"))
        #expect(health.status == 503)
        let write = service.handle(
            HTTPRequest(
                method: "POST", path: "/v1/transactions", headers: authorization,
                body: Array(TransactionsEndpointTests.body.utf8)))
        #expect(write.status == 503)
        #expect(String(decoding: write.body, as: UTF8.self).contains("ledger_unavailable"))
        let receipt = try ServiceFixture.signed(sampleReceipt(purchases: [("com.example.pro", "1", 0)]))
        let verify = service.handle(
            HTTPRequest(
                method: "POST", path: "/verifyReceipt", body: Array(ServiceFixture.verifyRequest(receipt).utf8)))
        #expect(verify.status == 200)
        #expect(try JSONValue(parsing: verify.body)["status"] == .integer(21009))
    }
}
