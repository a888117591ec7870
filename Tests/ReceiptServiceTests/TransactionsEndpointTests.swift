import Foundation
import ReceiptService
import StrictJSON
import Testing

@Suite("POST /v1/transactions records completed purchases and refunds, idempotently")
struct TransactionsEndpointTests {
    static let body =
        #"{"customer_id":"c1","bundle_id":"com.example.game","product_id":"com.example.pro","#
        + #""transaction_id":"5001","purchase_date":"2024-06-05T12:00:00Z","quantity":1}"#

    @Test("a new transaction is recorded (201) and the same body again returns the stored record (200)")
    func idempotentRecord() throws {
        let fixture = try ServiceFixture()
        let created = try fixture.post("/v1/transactions", json: Self.body)
        #expect(created.status == 201)
        let record = try created.json()["transaction"]
        #expect(record?["customer_id"] == .string("c1"))
        #expect(record?["purchase_date_ms"] == .string("1717588800000"))
        #expect(record?["original_transaction_id"] == .string("5001"))
        #expect(record?["original_purchase_date_ms"] == .string("1717588800000"))
        let replayed = try fixture.post("/v1/transactions", json: Self.body)
        #expect(replayed.status == 200)
        #expect(try replayed.json()["transaction"] == record)
        #expect(try fixture.send("GET", "/healthz").json()["ledger_transactions"] == .integer(1))
    }

    @Test("a different body with the same transaction id is a 409 naming the fields that differ")
    func conflict() throws {
        let fixture = try ServiceFixture()
        #expect(try fixture.post("/v1/transactions", json: Self.body).status == 201)
        let changed = Self.body.replacingOccurrences(of: "com.example.pro", with: "com.example.max")
            .replacingOccurrences(of: "2024-06-05T12:00:00Z", with: "2024-06-06T12:00:00Z")
        let reply = try fixture.post("/v1/transactions", json: changed)
        #expect(reply.status == 409)
        #expect(reply.errorCode == "conflict")
        #expect(
            try reply.json()["error"]?["fields"]
                == .array([.string("product_id"), .string("purchase_date"), .string("original_purchase_date")]))
    }

    @Test("write endpoints refuse requests without a valid bearer token (401)")
    func requiresToken() throws {
        let fixture = try ServiceFixture()
        for token in [nil, "wrong-token-0123456789abcdef0123456789abcdef", String(ServiceFixture.token.dropLast())] {
            let reply = try fixture.post("/v1/transactions", json: Self.body, token: token)
            #expect(reply.status == 401)
            #expect(reply.headers["www-authenticate"] == "Bearer")
        }
        #expect(try fixture.send("GET", "/healthz").json()["ledger_transactions"] == .integer(0))
    }

    @Test(
        "an invalid transaction is a 400 that names the field and the rule",
        arguments: [
            (
                #"{"bundle_id":"b","product_id":"p","transaction_id":"1","purchase_date":"2024-06-05T12:00:00Z"}"#,
                "customer_id"
            ),
            (#"{"customer_id":"c","bundle_id":"b","product_id":"p","transaction_id":"1"}"#, "purchase_date"),
            (
                #"{"customer_id":"c","bundle_id":"b","product_id":"p","transaction_id":"1","purchase_date":"yesterday"}"#,
                "purchase_date"
            ),
            (
                #"{"customer_id":"c","bundle_id":"b","product_id":"p","transaction_id":"1","purchase_date_ms":1,"colour":"red"}"#,
                "colour"
            ),
            (
                #"{"customer_id":"c","bundle_id":"b","product_id":"p","transaction_id":"1","purchase_date_ms":1,"cancellation_date_ms":2}"#,
                "cancellation_date"
            ),
            ("[]", "JSON object"),
            ("{", "not valid JSON"),
        ])
    func invalidTransaction(body: String, named: String) throws {
        let fixture = try ServiceFixture()
        let reply = try fixture.post("/v1/transactions", json: body)
        #expect(reply.status == 400)
        #expect(reply.errorCode == "invalid_request")
        guard case .string(let message)? = try reply.json()["error"]?["message"] else { return }
        #expect(message.contains(named), "\(message)")
    }

    @Test("a refund is recorded (201), replayed (200), refused with another date (409) or an unknown id (404)")
    func cancellation() throws {
        let fixture = try ServiceFixture()
        #expect(try fixture.post("/v1/transactions", json: Self.body).status == 201)
        let refund = #"{"cancellation_date":"2024-06-07T00:00:00Z"}"#
        let created = try fixture.post("/v1/transactions/5001/cancellation", json: refund)
        #expect(created.status == 201)
        #expect(try created.json()["transaction"]?["cancellation_date_ms"] == .string("1717718400000"))
        #expect(try fixture.post("/v1/transactions/5001/cancellation", json: refund).status == 200)
        let other = try fixture.post("/v1/transactions/5001/cancellation", json: #"{"cancellation_date_ms":1}"#)
        #expect(other.status == 409)
        #expect(try other.json()["error"]?["fields"] == .array([.string("cancellation_date")]))
        let unknown = try fixture.post("/v1/transactions/9999/cancellation", json: refund)
        #expect(unknown.status == 404)
        #expect(unknown.errorCode == "unknown_transaction")
        #expect(try fixture.post("/v1/transactions/5001/cancellation", json: "{}").status == 400)
    }

    @Test("a GET on a POST endpoint is a 405 with an Allow header")
    func wrongMethod() throws {
        let fixture = try ServiceFixture()
        let reply = try fixture.send("GET", "/v1/transactions")
        #expect(reply.status == 405)
        #expect(reply.headers["allow"] == "POST")
        #expect(reply.errorCode == "method_not_allowed")
    }
}
