import Entitlements
import ReceiptModel
import ReceiptSigner
import ReceiptVerifier
import Testing

/// The product ids of the example catalog.
enum ProductID {
    static let removeAds = "com.example.removeads"
    static let proMonthly = "com.example.pro.monthly"
    static let premiumYearly = "com.example.premium.yearly"
    static let season = "com.example.season"
    static let coins100 = "com.example.coins100"
}

/// One purchase as a receipt lists it. Dates are RFC 3339 text.
struct Purchase {
    var product: String
    var transaction: String
    var purchased: String
    var expires: String? = nil
    var cancelled: String? = nil
    var quantity: Int64 = 1
    var original: String? = nil
}

/// One receipt of a scenario: for which app, when the App Store created it, and the purchases it lists.
struct TestReceipt {
    var bundleID = Scenario.bundleID
    var created = "2024-06-01T00:00:00Z"
    var purchases: [Purchase]
}

/// Runs the whole path a backend runs: receipts signed by the real signer, verified against the test root, then
/// evaluated by the engine at an instant.
enum Scenario {
    static let bundleID = "com.example.app"

    /// One throw-away chain per test process (key generation is the slow part).
    static let chain = Result { try DevelopmentChain.create(algorithm: .ecP256) }

    /// The catalog of the issue, word for word (only the line breaks differ).
    static let exampleCatalogJSON = """
        {
          "products": [
            {"id": "com.example.removeads",   "type": "non_consumable", "entitlements": ["no_ads"]},
            {"id": "com.example.pro.monthly", "type": "auto_renewable", "entitlements": ["pro"],
             "group": "main", "rank": 2},
            {"id": "com.example.premium.yearly", "type": "auto_renewable", "entitlements": ["pro", "premium"],
             "group": "main", "rank": 1},
            {"id": "com.example.season",      "type": "non_renewing",   "entitlements": ["season"], "duration": "P30D"},
            {"id": "com.example.coins100",    "type": "consumable",     "entitlements": ["coins"], "amount": 100}
          ],
          "grace_period": "P16D"
        }
        """

    static func exampleCatalog() throws -> Catalog { try catalog(exampleCatalogJSON) }

    static func catalog(_ json: String) throws -> Catalog { try Catalog(json: Array(json.utf8)) }

    static func date(_ text: String) throws -> ReceiptDate {
        try #require(ReceiptDate(rfc3339: text), "\"\(text)\" is not an RFC 3339 date")
    }

    static func optionalDate(_ text: String?) throws -> ReceiptDate? {
        guard let text else { return nil }
        return try date(text)
    }

    static func receipt(_ receipt: TestReceipt) throws -> Receipt {
        Receipt(
            bundleID: receipt.bundleID, creationDate: try date(receipt.created), receiptType: "ProductionSandbox",
            inAppPurchases: try receipt.purchases.map { purchase in
                InAppPurchase(
                    productID: purchase.product, transactionID: purchase.transaction,
                    purchaseDate: try date(purchase.purchased), quantity: purchase.quantity,
                    originalTransactionID: purchase.original, expiresDate: try optionalDate(purchase.expires),
                    cancellationDate: try optionalDate(purchase.cancelled))
            })
    }

    /// Each receipt signed, then verified as any receipt from outside would be.
    static func verified(_ receipts: [TestReceipt]) throws -> [VerifiedReceipt] {
        let chain = try chain.get()
        let signer = ReceiptSigner(credentials: try chain.credentials)
        let verifier = try ReceiptVerifier(trustAnchors: [chain.root])
        return try receipts.map { try verifier.verify(signer.sign(receipt($0))) }
    }

    /// What `receipts` unlock at `now` under `catalog` (the example catalog by default).
    static func evaluate(_ receipts: [TestReceipt], catalog: Catalog? = nil, at now: String) throws
        -> EntitlementReport
    {
        let engine = EntitlementEngine(catalog: try catalog ?? exampleCatalog())
        return try engine.evaluate(verified(receipts), at: date(now))
    }

    /// What the purchases of one receipt unlock at `now`.
    static func evaluate(_ purchases: [Purchase], catalog: Catalog? = nil, at now: String) throws
        -> EntitlementReport
    {
        try evaluate([TestReceipt(purchases: purchases)], catalog: catalog, at: now)
    }
}
