import Foundation
import ReceiptService
import StrictJSON
import Testing

/// Every identifier has a length limit of 255 bytes, as Apple's have, in bodies, paths and query arguments.
@Suite("Identifiers are at most 255 bytes")
struct IdentifierLimitTests {
    static let long = String(repeating: "x", count: 256)
    static let longest = String(repeating: "x", count: 255)

    /// A transaction body with `key` set to `value`.
    static func body(_ key: String, _ value: String) -> String {
        var object = JSONObject([
            "customer_id": .string("c1"), "bundle_id": .string("com.example.game"),
            "product_id": .string("com.example.pro"), "transaction_id": .string("1001"),
            "purchase_date": .string("2024-06-05T12:00:00Z"),
        ])
        object[key] = .string(value)
        return JSONValue.object(object).serialized()
    }

    @Test(
        "a recorded transaction's ids over 255 bytes are refused naming the key",
        arguments: [
            "customer_id", "bundle_id", "product_id", "transaction_id", "original_transaction_id",
            "promotional_offer_id",
        ])
    func bodyIdentifiers(key: String) throws {
        let fixture = try ServiceFixture()
        let refused = try fixture.post("/v1/transactions", json: Self.body(key, Self.long))
        #expect(refused.status == 400)
        #expect(refused.text.contains("\(key): must be at most 255 bytes"), "\(refused.text)")
        #expect(try fixture.post("/v1/transactions", json: Self.body(key, Self.longest)).status == 201)
    }

    @Test("an empty product, transaction, bundle or customer id is refused")
    func emptyIdentifiers() throws {
        let fixture = try ServiceFixture()
        for key in ["customer_id", "bundle_id", "product_id", "transaction_id"] {
            let refused = try fixture.post("/v1/transactions", json: Self.body(key, ""))
            #expect(refused.status == 400, "\(key)")
        }
    }

    @Test("path parameters and query arguments over 255 bytes are refused")
    func pathAndQuery() throws {
        let fixture = try ServiceFixture()
        let cancellation = try fixture.post(
            "/v1/transactions/\(Self.long)/cancellation", json: #"{"cancellation_date":"2024-06-07T09:30:00Z"}"#)
        #expect(cancellation.status == 400)
        #expect(cancellation.text.contains("transaction_id in the path must be at most 255 bytes"))
        let customer = try fixture.send("GET", "/v1/customers/\(Self.long)/receipt?bundle_id=com.example.game")
        #expect(customer.status == 400)
        let bundle = try fixture.send("GET", "/v1/customers/c1/receipt?bundle_id=\(Self.long)")
        #expect(bundle.status == 400)
        #expect(bundle.text.contains("bundle_id must be at most 255 bytes"))
    }
}
