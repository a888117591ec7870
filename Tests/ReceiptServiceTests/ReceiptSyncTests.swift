import Foundation
import ReceiptModel
import ReceiptService
import ReceiptSigner
import StrictJSON
import Testing

/// `POST /v1/receipts` `{"customer_id", "receipt-data"}`: a StoreKit 1 app's "sync purchases", on both ledger
/// stores. The receipts hold the fixture's monthly subscription and a non-consumable bought on day 2.
@Suite("POST /v1/receipts: a verified app receipt's purchases recorded for a customer")
struct ReceiptSyncTests {
    typealias Fixture = AppleNotificationFixture

    static let removeAds = InAppPurchase(
        productID: "com.example.removeads", transactionID: "8000", purchaseDate: Fixture.day(2), quantity: 1,
        originalTransactionID: "8000", originalPurchaseDate: Fixture.day(2))

    static func receipt(_ purchases: [InAppPurchase], type: String = "Production") -> Receipt {
        Receipt(
            bundleID: Fixture.bundleID, creationDate: Fixture.day(3), receiptType: type, inAppPurchases: purchases)
    }

    static func request(customer: String = "player-1", _ receipt: [UInt8]) -> String {
        #"{"customer_id":"\#(customer)","receipt-data":"\#(Data(receipt).base64EncodedString())"}"#
    }

    static func sync(_ fixture: Fixture, _ receipt: Receipt, customer: String = "player-1") throws -> HTTPReply {
        try fixture.service.post(
            "/v1/receipts", json: request(customer: customer, try ServiceFixture.signed(receipt)))
    }

    @Test(
        "every purchase is recorded for the customer (201); the same receipt again answers 200 with the same ones",
        arguments: LedgerKind.allCases)
    func allPurchasesRecorded(ledger: LedgerKind) throws {
        let fixture = try Fixture(ledger)
        let receipt = Self.receipt([Fixture.period(0).purchase, Self.removeAds])
        let created = try Self.sync(fixture, receipt)
        #expect(created.status == 201, "\(created.text)")
        let transactions = try created.json()["transactions"]
        #expect(transactions?.transactionIDs == ["7000", "8000"])
        #expect(transactions?[0]?["customer_id"] == .string("player-1"))
        #expect(transactions?[1]?["customer_id"] == .string("player-1"))
        #expect(try fixture.ledgerTransactions() == .integer(2))
        #expect(try fixture.state("player-1", at: Fixture.day(10)) == "active")
        #expect(try fixture.state("player-1", "no_ads", at: Fixture.day(10)) == "active")
        let again = try Self.sync(fixture, receipt)
        #expect(again.status == 200)
        #expect(try again.json()["transactions"] == transactions)
        #expect(try fixture.ledgerTransactions() == .integer(2))
    }

    @Test(
        "a purchase with a cancellation_date is recorded with its refund: revoked from then on",
        arguments: LedgerKind.allCases)
    func refundedPurchase(ledger: LedgerKind) throws {
        let fixture = try Fixture(ledger)
        var refunded = Self.removeAds
        refunded.cancellationDate = Fixture.day(5)
        let reply = try Self.sync(fixture, Self.receipt([refunded]))
        #expect(reply.status == 201, "\(reply.text)")
        #expect(
            try reply.json()["transactions"]?[0]?["cancellation_date_ms"]
                == .string(String(Fixture.day(5).millisecondsSince1970)))
        #expect(try fixture.state("player-1", "no_ads", at: Fixture.day(10)) == "revoked")
        #expect(try fixture.state("player-1", "no_ads", at: Fixture.day(4)) == "active")
    }

    @Test("a receipt with no purchases is refused 422 no_purchases", arguments: LedgerKind.allCases)
    func noPurchases(ledger: LedgerKind) throws {
        let fixture = try Fixture(ledger)
        let reply = try Self.sync(fixture, Self.receipt([]))
        #expect(reply.status == 422)
        #expect(reply.errorCode == "no_purchases")
        #expect(try fixture.ledgerTransactions() == .integer(0))
    }

    @Test(
        "a receipt that does not verify, or is Sandbox's, is refused 422 with the verifier's code, storing nothing",
        arguments: LedgerKind.allCases, ["malformed", "untrusted_chain", "sandbox_receipt"])
    func invalidReceipt(ledger: LedgerKind, code: String) throws {
        let fixture = try Fixture(ledger)
        let purchases = [Fixture.period(0).purchase]
        let body: String
        switch code {
        case "malformed": body = #"{"customer_id":"player-1","receipt-data":"MIIBAAAA"}"#
        case "untrusted_chain":
            let other = try DevelopmentChain.create(algorithm: .ecP256)
            body = Self.request(try ReceiptSigner(credentials: other.credentials).sign(Self.receipt(purchases)))
        default: body = Self.request(try ServiceFixture.signed(Self.receipt(purchases, type: "ProductionSandbox")))
        }
        let reply = try fixture.service.post("/v1/receipts", json: body)
        #expect(reply.status == 422, "\(reply.text)")
        #expect(reply.errorCode == code)
        #expect(try fixture.ledgerTransactions() == .integer(0))
    }

    @Test(
        "a purchase that conflicts with the ledger is refused 409 naming the fields, and nothing of the receipt is stored",
        arguments: LedgerKind.allCases)
    func conflictStoresNothing(ledger: LedgerKind) throws {
        let fixture = try Fixture(ledger)
        let recorded =
            #"{"customer_id":"player-1","bundle_id":"com.example.game","product_id":"com.example.removeads","#
            + #""transaction_id":"8000","purchase_date":"\#(Fixture.day(3).rfc3339)","quantity":1}"#
        #expect(try fixture.service.post("/v1/transactions", json: recorded).status == 201)
        let reply = try Self.sync(fixture, Self.receipt([Fixture.period(0).purchase, Self.removeAds]))
        #expect(reply.status == 409)
        #expect(reply.errorCode == "conflict")
        #expect(
            try reply.json()["error"]?["fields"]
                == .array([.string("purchase_date"), .string("original_purchase_date")]))
        #expect(try fixture.ledgerTransactions() == .integer(1))
        #expect(try fixture.state("player-1", at: Fixture.day(10)) == nil)
    }

    @Test(
        "a placeholder apple:ORIGINAL customer made by a notification is adopted by the customer posting the receipt",
        arguments: LedgerKind.allCases)
    func placeholderAdopted(ledger: LedgerKind) throws {
        let fixture = try Fixture(ledger)
        #expect(
            try fixture.deliver(Fixture.body("SUBSCRIBED", transaction: Fixture.period(0))).json()["customer_id"]
                == .string("apple:7000"))
        #expect(
            try fixture.deliver(Fixture.body("DID_RENEW", signed: Fixture.day(30), transaction: Fixture.period(1)))
                .json()["customer_id"] == .string("apple:7000"))
        let reply = try Self.sync(fixture, Self.receipt([Fixture.period(0).purchase]))
        #expect(reply.status == 201, "\(reply.text)")
        #expect(try reply.json()["transactions"]?[0]?["customer_id"] == .string("player-1"))
        #expect(try fixture.state("player-1", at: Fixture.day(40)) == "active")
        #expect(try fixture.state("apple:7000", at: Fixture.day(40)) == nil)
        #expect(try fixture.ledgerTransactions() == .integer(2))
    }
}
