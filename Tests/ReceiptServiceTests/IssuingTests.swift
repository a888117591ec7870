import Foundation
import ReceiptModel
import ReceiptService
import ReceiptVerifier
import StrictJSON
import Testing

/// Receipts the service signs: never one it would refuse itself, and the same content signed once.
@Suite("Issued receipts are bounded and signed once per ledger state")
struct IssuingTests {
    static func record(_ fixture: ServiceFixture, _ id: String, product: String = "com.example.pro") throws -> Int {
        let body =
            #"{"customer_id":"c1","bundle_id":"com.example.game","product_id":"\#(product)","#
            + #""transaction_id":"\#(id)","original_transaction_id":"1002","purchase_date_ms":"\#(1_720_000_000_000 + (Int64(id) ?? 0))","#
            + #""expires_date_ms":"1722600000000"}"#
        return try fixture.post("/v1/transactions", json: body).status
    }

    @Test("a restore of more transactions than limits.max_purchases is refused with 422, not issued")
    func restoreOverLimit() throws {
        let fixture = try ServiceFixture { $0.verificationLimits.maximumPurchases = 3 }
        for id in 1...3 { #expect(try Self.record(fixture, "\(id)") == 201) }
        let path = "/v1/customers/c1/receipt?bundle_id=com.example.game"
        let fits = try fixture.send("GET", path)
        #expect(fits.status == 200)
        let reverified = try fixture.post("/verifyReceipt", json: ServiceFixture.verifyRequest(fits.body)).json()
        #expect(reverified["status"] == .integer(0), "the service accepts what it issues")
        #expect(try Self.record(fixture, "4") == 201)
        let refused = try fixture.send("GET", path)
        #expect(refused.status == 422)
        #expect(refused.errorCode == "too_many_purchases")
        #expect(refused.text.contains("limits.max_purchases"))
    }

    @Test("a restore larger than limits.max_receipt_bytes is refused with 422, not issued")
    func restoreOverSize() throws {
        let fixture = try ServiceFixture { $0.verificationLimits.maximumInputSize = 2048 }
        for id in 1...12 { #expect(try Self.record(fixture, "\(id)") == 201) }
        let refused = try fixture.send("GET", "/v1/customers/c1/receipt?bundle_id=com.example.game")
        #expect(refused.status == 422)
        #expect(refused.errorCode == "receipt_too_large")
    }

    @Test("the same ledger state is signed once: latest_receipt repeats until the ledger changes")
    func signedOnce() throws {
        let fixture = try ServiceFixture()
        #expect(try Self.record(fixture, "1002") == 201)
        #expect(try Self.record(fixture, "1003") == 201)
        var receipt = sampleReceipt(purchases: [("com.example.pro", "1002", 3)])
        receipt.inAppPurchases[0].expiresDate = ReceiptDate(millisecondsSince1970: 1_720_000_000_000)
        let request = ServiceFixture.verifyRequest(try ServiceFixture.signed(receipt))
        func latest() throws -> JSONValue? {
            try fixture.post("/verifyReceipt", json: request).json()["latest_receipt"]
        }
        let first = try latest()
        #expect(first != nil)
        #expect(try latest() == first, "ECDSA signatures differ every time: equal receipts were signed once")
        #expect(try Self.record(fixture, "1004") == 201)
        let changed = try latest()
        #expect(changed != nil && changed != first)
    }
}
