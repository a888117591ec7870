import Entitlements
import Foundation
import HTTPServer
import ReceiptLedger
import ReceiptService
import StrictJSON
import Testing

/// Answers to callers without a token say nothing about what the service holds or how it is configured.
@Suite("Nothing private in answers to strangers")
struct PrivacyTests {
    @Test("an unknown catalog_id is refused without listing the configured ids")
    func unknownCatalog() throws {
        let catalog = try Catalog(json: Array(EntitlementsEndpointTests.catalogJSON.utf8))
        let fixture = try ServiceFixture { $0.catalogs = ["secret-catalog-name": catalog] }
        let reply = try fixture.post(
            "/v1/entitlements", json: #"{"receipts":["MIIB"],"catalog_id":"guess"}"#, token: nil)
        #expect(reply.status == 400)
        #expect(!reply.text.contains("secret-catalog-name"), "\(reply.text)")
        #expect(reply.text.contains("no catalog with this id is configured"))
    }

    @Test("verifyReceipt's 21009 and /healthz's 503 carry no ledger error text, only a reason that names nothing")
    func ledgerErrors() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("privacy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("ledger.sqlite").path
        let ledger = try SQLiteLedger(path: path)
        let configuration = ServiceConfiguration(
            environment: .production, ledgerPath: path, trustAnchors: [ServiceFixture.chain.root])
        let service = try ReceiptService(configuration: configuration, ledger: ledger)
        ledger.close()
        let receipt = try ServiceFixture.signed(sampleReceipt(purchases: [("com.example.pro", "secret-7", 0)]))
        let verify = service.handle(
            HTTPRequest(
                method: "POST", path: "/verifyReceipt", body: Array(ServiceFixture.verifyRequest(receipt).utf8)))
        let answer = try JSONValue(parsing: verify.body)
        #expect(answer["status"] == .integer(21009))
        #expect(answer["error"]?["message"] == .string("the ledger could not be read: the ledger's storage failed"))
        let health = service.handle(HTTPRequest(method: "GET", path: "/healthz"))
        #expect(health.status == 503)
        #expect(
            try JSONValue(parsing: health.body)["error"]?["message"]
                == .string("the ledger cannot take writes: the ledger is closed"))
    }
}
