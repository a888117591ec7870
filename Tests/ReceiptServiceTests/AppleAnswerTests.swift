import Entitlements
import Foundation
import ReceiptCrypto
import ReceiptModel
import ReceiptService
import StrictJSON
import Testing
import ZoneInfo

/// A real receipt and Apple's own verifyReceipt answer for it (RevenueCat's test data, `Vectors/SOURCES.md`): the
/// service must answer with the same keys, values and JSON types.
@Suite("POST /verifyReceipt gives Apple's exact answer for a real receipt")
struct AppleAnswerTests {
    static let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Vectors")
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The catalog an app would configure: both products are in Apple's subscription group 20662382.
    static let catalogJSON = """
        {"bundle_id": "com.revenuecat.sampleapp", "products": [
          {"id": "com.revenuecat.monthly_4.99.1_week_intro", "type": "auto_renewable", "entitlements": ["pro"],
           "group": "20662382", "rank": 2},
          {"id": "com.revenuecat.annual_39.99.2_week_intro", "type": "auto_renewable", "entitlements": ["pro"],
           "group": "20662382", "rank": 1}]}
        """

    struct Exchange {
        let receiptData: String
        let apple: JSONValue
        let ours: JSONValue
        let before: Int64
        let after: Int64
    }

    /// Posts the receipt, as the app sent it, to a sandbox service that trusts Apple's root.
    static func exchange() throws -> Exchange {
        let receiptData = String(
            decoding: try Data(
                contentsOf: vectors.appendingPathComponent("revenuecat/base64encodedreceiptsample1.txt")),
            as: UTF8.self)
        let apple = try JSONValue(
            parsing: [UInt8](
                try Data(contentsOf: vectors.appendingPathComponent("revenuecat/verifyReceiptSample1.txt"))))
        let appleRoot = try Certificate(
            derEncoded: [UInt8](
                try Data(contentsOf: root.appendingPathComponent("certs/apple/AppleIncRootCertificate.cer"))))
        let catalog = try Catalog(json: Array(catalogJSON.utf8))
        let fixture = try ServiceFixture {
            $0.environment = .sandbox
            $0.trustAnchors = [appleRoot]
            $0.catalogs = ["sample": catalog]
        }
        let before = ReceiptService.systemTime().millisecondsSince1970
        let body = JSONValue.object(JSONObject(["receipt-data": .string(receiptData)])).serialized()
        let ours = try fixture.post("/verifyReceipt", json: body).json()
        let after = ReceiptService.systemTime().millisecondsSince1970
        return Exchange(receiptData: receiptData, apple: apple, ours: ours, before: before, after: after)
    }

    static func object(_ value: JSONValue?) -> JSONObject {
        if case .object(let object)? = value { return object }
        return JSONObject()
    }

    static func array(_ value: JSONValue?) -> [JSONValue] {
        if case .array(let array)? = value { return array }
        return []
    }

    /// Every member of `expected` is in `actual` with the same value and JSON type, in the same order, and
    /// `actual` has no other member; `skipping` keys are left to other checks.
    static func expectSameMembers(
        _ actual: JSONObject, _ expected: JSONObject, at path: String, skipping: Set<String> = [],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(actual.keys == expected.keys, "\(path): keys", sourceLocation: sourceLocation)
        for member in expected.members where !skipping.contains(member.key) {
            #expect(
                actual[member.key] == member.value, "\(path).\(member.key)", sourceLocation: sourceLocation)
        }
    }

    @Test("the top level has Apple's members in Apple's order (pending_renewal_info aside) and status 0")
    func topLevel() throws {
        let exchange = try Self.exchange()
        let apple = Self.object(exchange.apple)
        let ours = Self.object(exchange.ours)
        #expect(ours.keys == apple.keys.filter { $0 != "pending_renewal_info" })
        #expect(ours["status"] == apple["status"])
        #expect(ours["environment"] == apple["environment"])
    }

    @Test("the receipt carries every key of Apple's, with the same value and JSON type, *_pst twins included")
    func receipt() throws {
        let exchange = try Self.exchange()
        let apple = Self.object(exchange.apple["receipt"])
        let ours = Self.object(exchange.ours["receipt"])
        Self.expectSameMembers(
            ours, apple, at: "receipt", skipping: ["request_date", "request_date_ms", "request_date_pst", "in_app"])
        let appleInApp = Self.array(apple["in_app"])
        let ourInApp = Self.array(ours["in_app"])
        #expect(ourInApp.count == appleInApp.count)
        for (index, (actual, expected)) in zip(ourInApp, appleInApp).enumerated() {
            Self.expectSameMembers(Self.object(actual), Self.object(expected), at: "receipt.in_app[\(index)]")
        }
    }

    @Test("request_date, request_date_ms and request_date_pst are the instant of the request, in Apple's forms")
    func requestDate() throws {
        let exchange = try Self.exchange()
        let receipt = Self.object(exchange.ours["receipt"])
        guard case .string(let milliseconds)? = receipt["request_date_ms"], let instant = Int64(milliseconds) else {
            Issue.record("request_date_ms is not a string of digits: \(String(describing: receipt["request_date_ms"]))")
            return
        }
        #expect((exchange.before...exchange.after).contains(instant))
        let date = ReceiptDate(millisecondsSince1970: instant)
        #expect(receipt["request_date"] == .string(date.appleFormat))
        let pacific = try TimeZoneRules.system("America/Los_Angeles")
        #expect(receipt["request_date_pst"] == .string(date.appleFormat(in: pacific)))
    }

    @Test("latest_receipt_info has every key of Apple's entries for the same transactions, in the same order")
    func latestReceiptInfo() throws {
        let exchange = try Self.exchange()
        let apple = Self.array(exchange.apple["latest_receipt_info"])
        let ours = Self.array(exchange.ours["latest_receipt_info"])
        #expect(ours.count == apple.count)
        for (index, (actual, expected)) in zip(ours, apple).enumerated() {
            Self.expectSameMembers(Self.object(actual), Self.object(expected), at: "latest_receipt_info[\(index)]")
        }
    }

    @Test("latest_receipt is the receipt as sent, since the ledger knows nothing newer")
    func latestReceipt() throws {
        let exchange = try Self.exchange()
        let sent = exchange.receiptData.filter { !$0.isWhitespace }
        #expect(exchange.ours["latest_receipt"] == .string(sent))
    }
}
