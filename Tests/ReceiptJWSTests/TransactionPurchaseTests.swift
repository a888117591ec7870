import ReceiptJWS
import ReceiptModel
import StrictJSON
import Testing

/// A StoreKit 2 transaction read as a receipt's in-app purchase (``SignedTransaction/inAppPurchase()``), as the
/// ledger records the transactions of Apple's notifications.
@Suite("A signed transaction as a receipt's purchase")
struct TransactionPurchaseTests {
    private static let purchaseDate = ReceiptDate(millisecondsSince1970: 1_717_236_000_000)

    /// A transaction of a monthly subscription with the offer members `offer` (offerType, offerIdentifier,
    /// offerDiscountType).
    private func transaction(_ offer: [String: JSONValue]) throws -> SignedTransaction {
        var json = JSONObject()
        json["transactionId"] = .string("7000")
        json["originalTransactionId"] = .string("7000")
        json["bundleId"] = .string("com.example.game")
        json["productId"] = .string("com.example.pro.monthly")
        json["purchaseDate"] = .integer(Self.purchaseDate.millisecondsSince1970)
        json["expiresDate"] = .integer(Self.purchaseDate.millisecondsSince1970 + 30 * 86_400_000)
        for key in ["offerType", "offerIdentifier", "offerDiscountType"] {
            if let value = offer[key] { json[key] = value }
        }
        return try SignedTransaction(json: json)
    }

    @Test("a promotional offer's identifier becomes promotional_offer_id, and nothing else")
    func promotionalOffer() throws {
        let purchase = try transaction([
            "offerType": .integer(2), "offerIdentifier": .string("winter-half"),
            "offerDiscountType": .string("PAY_AS_YOU_GO"),
        ]).inAppPurchase()
        #expect(purchase.promotionalOfferID == "winter-half")
        #expect(purchase.isTrialPeriod == nil)
        #expect(purchase.isInIntroOfferPeriod == nil)
    }

    @Test("an introductory free trial is a trial period")
    func freeTrial() throws {
        let purchase = try transaction(["offerType": .integer(1), "offerDiscountType": .string("FREE_TRIAL")])
            .inAppPurchase()
        #expect(purchase.isTrialPeriod == true)
        #expect(purchase.isInIntroOfferPeriod == nil)
        #expect(purchase.promotionalOfferID == nil)
    }

    @Test(
        "an introductory price is an intro-offer period, also when the payload names no discount type",
        arguments: [JSONValue.string("PAY_AS_YOU_GO"), .string("PAY_UP_FRONT"), nil])
    func introductoryPrice(discount: JSONValue?) throws {
        var offer: [String: JSONValue] = ["offerType": .integer(1)]
        offer["offerDiscountType"] = discount
        let purchase = try transaction(offer).inAppPurchase()
        #expect(purchase.isInIntroOfferPeriod == true)
        #expect(purchase.isTrialPeriod == nil)
    }

    @Test(
        "an offer code, a win-back offer or no offer sets none of the receipt's offer fields",
        arguments: [3 as Int64, 4, nil])
    func noReceiptOffer(type: Int64?) throws {
        var offer: [String: JSONValue] = ["offerIdentifier": .string("CODE-2024")]
        offer["offerType"] = type.map(JSONValue.integer)
        let purchase = try transaction(offer).inAppPurchase()
        #expect(purchase.promotionalOfferID == nil)
        #expect(purchase.isTrialPeriod == nil)
        #expect(purchase.isInIntroOfferPeriod == nil)
    }

    @Test("a purchase's offer survives its payload and back: a promotional offer, a free trial, an introductory price")
    func offerRoundTrip() throws {
        let base = InAppPurchase(
            productID: "com.example.pro.monthly", transactionID: "7000", purchaseDate: Self.purchaseDate,
            expiresDate: ReceiptDate(millisecondsSince1970: Self.purchaseDate.millisecondsSince1970 + 86_400_000))
        var promotional = base
        promotional.promotionalOfferID = "winter-half"
        var trial = base
        trial.isTrialPeriod = true
        var introductory = base
        introductory.isInIntroOfferPeriod = true
        for purchase in [promotional, trial, introductory] {
            let payload = SignedTransaction.payload(
                for: purchase, bundleID: "com.example.game", environment: .production, signedDate: Self.purchaseDate)
            let back = try SignedTransaction(json: payload).inAppPurchase()
            #expect(back.promotionalOfferID == purchase.promotionalOfferID)
            #expect(back.isTrialPeriod == purchase.isTrialPeriod)
            #expect(back.isInIntroOfferPeriod == purchase.isInIntroOfferPeriod)
        }
    }
}
