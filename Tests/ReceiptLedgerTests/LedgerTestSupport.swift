import Foundation
import ReceiptLedger
import ReceiptModel

/// A directory of its own for one test, removed with everything in it when the test's suite instance goes away.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ReceiptLedgerTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    /// The path of `name` inside the directory.
    func path(_ name: String = "ledger.sqlite") -> String {
        url.appendingPathComponent(name).path
    }
}

/// Transactions to record.
enum Sample {
    static let bundleID = "com.example.app"

    /// Every optional field set, with a web order line item id above 2^53 (not representable as a Double) and dates
    /// with milliseconds, one before 1970.
    static func full(
        id: String = "2000000123456789", customerID: String = "customer-a", bundleID: String = Sample.bundleID,
        purchasedAt milliseconds: Int64 = 1_717_588_800_123
    ) -> LedgerTransaction {
        LedgerTransaction(
            customerID: customerID, bundleID: bundleID,
            purchase: InAppPurchase(
                productID: "com.example.app.premium.monthly", transactionID: id,
                purchaseDate: ReceiptDate(millisecondsSince1970: milliseconds), quantity: 3,
                originalTransactionID: "2000000000000001",
                originalPurchaseDate: ReceiptDate(millisecondsSince1970: -86_400_001), productType: 3,
                expiresDate: ReceiptDate(millisecondsSince1970: 1_720_180_800_999),
                webOrderLineItemID: 9_007_199_254_740_993, isTrialPeriod: true, isInIntroOfferPeriod: false,
                promotionalOfferID: "spring-offer-ü"))
    }

    /// Only the required fields set; every optional one nil.
    static func minimal(
        id: String = "2000000999999999", customerID: String = "customer-a", bundleID: String = Sample.bundleID,
        purchasedAt milliseconds: Int64 = 1_717_588_800_000
    ) -> LedgerTransaction {
        LedgerTransaction(
            customerID: customerID, bundleID: bundleID,
            purchase: InAppPurchase(
                productID: "com.example.app.coins", transactionID: id,
                purchaseDate: ReceiptDate(millisecondsSince1970: milliseconds), quantity: nil))
    }
}
