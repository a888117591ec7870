import Foundation
import HTTPServer
import ReceiptModel
import ReceiptService
import ReceiptVerifier
import Testing

@Suite("GET /v1/customers/{customer_id}/receipt issues a freshly signed receipt of everything they bought")
struct CustomerReceiptEndpointTests {
    func record(_ fixture: ServiceFixture, customer: String, bundle: String, transaction: String, day: Int) throws {
        let body =
            #"{"customer_id":"\#(customer)","bundle_id":"\#(bundle)","product_id":"com.example.pro","#
            + #""transaction_id":"\#(transaction)","purchase_date_ms":\#(1_717_200_000_000 + Int64(day) * 86_400_000)}"#
        #expect(try fixture.post("/v1/transactions", json: body).status == 201)
    }

    @Test("the receipt is DER signed by the service, with the customer's transactions for that app only")
    func issuedReceipt() throws {
        let fixture = try ServiceFixture()
        try record(fixture, customer: "c 1", bundle: "com.example.game", transaction: "2", day: 2)
        try record(fixture, customer: "c 1", bundle: "com.example.game", transaction: "1", day: 1)
        try record(fixture, customer: "c 1", bundle: "com.example.other", transaction: "3", day: 3)
        try record(fixture, customer: "c2", bundle: "com.example.game", transaction: "4", day: 4)
        #expect(
            try fixture.post("/v1/transactions/2/cancellation", json: #"{"cancellation_date_ms":1717500000000}"#).status
                == 201)
        let reply = try fixture.send("GET", "/v1/customers/c%201/receipt?bundle_id=com.example.game")
        #expect(reply.status == 200)
        #expect(reply.headers["content-type"] == "application/pkcs7-mime")
        let verified = try ReceiptVerifier(trustAnchors: [ServiceFixture.chain.root]).verify(reply.body)
        #expect(verified.receipt.bundleID == "com.example.game")
        #expect(verified.receipt.receiptType == "Production")
        #expect(verified.receipt.inAppPurchases.map(\.transactionID) == ["1", "2"])
        #expect(
            verified.receipt.inAppPurchases[1].cancellationDate == ReceiptDate(millisecondsSince1970: 1_717_500_000_000)
        )
    }

    @Test("with Accept: text/plain the receipt comes as base64 text")
    func base64Receipt() throws {
        let fixture = try ServiceFixture()
        try record(fixture, customer: "c1", bundle: "com.example.game", transaction: "1", day: 1)
        let reply = try fixture.send(
            "GET", "/v1/customers/c1/receipt?bundle_id=com.example.game", headers: ["Accept": "text/plain"])
        #expect(reply.headers["content-type"] == "text/plain")
        let verified = try ReceiptVerifier(trustAnchors: [ServiceFixture.chain.root]).verify(reply.body)
        #expect(verified.receipt.inAppPurchases.count == 1)
    }

    @Test("a customer with no purchases gets a valid receipt with none")
    func emptyReceipt() throws {
        let fixture = try ServiceFixture()
        let reply = try fixture.send("GET", "/v1/customers/nobody/receipt?bundle_id=com.example.game")
        #expect(reply.status == 200)
        #expect(
            try ReceiptVerifier(trustAnchors: [ServiceFixture.chain.root]).verify(reply.body).receipt.inAppPurchases
                .isEmpty)
    }

    @Test("a missing bundle_id is a 400, a malformed escape in the path a 400, no token a 401")
    func invalidRequests() throws {
        let fixture = try ServiceFixture()
        #expect(try fixture.send("GET", "/v1/customers/c1/receipt").status == 400)
        // URLSession would re-encode a malformed escape, so this one goes to the service directly.
        let malformed = fixture.server.service.handle(
            HTTPRequest(
                method: "GET", path: "/v1/customers/c%zz/receipt", query: [("bundle_id", "b")],
                headers: [("authorization", "Bearer \(ServiceFixture.token)")]))
        #expect(malformed.status == 400)
        #expect(try fixture.send("GET", "/v1/customers/c1/receipt?bundle_id=b", token: nil).status == 401)
    }

    @Test("a service without a signing key answers 501 issuing_disabled")
    func noSigner() throws {
        let fixture = try ServiceFixture { $0.signer = nil }
        let reply = try fixture.send("GET", "/v1/customers/c1/receipt?bundle_id=com.example.game")
        #expect(reply.status == 501)
        #expect(reply.errorCode == "issuing_disabled")
    }
}
