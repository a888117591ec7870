import Foundation
import ReceiptModel
import ReceiptService
import StrictJSON
import Testing

/// Apple's App Store Server API served for the ledger's transactions, driven by Apple's own Python library
/// (`AppStoreServerAPIClient` for the calls, `SignedDataVerifier` pinned to the development root for every signed
/// answer).
@Suite("App Store Server API, with Apple's client")
struct StoreAPITests {
    static let monthly = "com.example.pro.monthly"
    static let removeAds = "com.example.removeads"
    static let coins = "com.example.coins100"
    /// Milliseconds of 2030-01-01: subscriptions expiring then are active while these tests run.
    static let future: Int64 = 1_893_456_000_000

    @Test(
        "Get Transaction Info answers the transaction with Apple's fields, as Apple's verifier decodes them",
        arguments: LedgerKind.allCases)
    func transactionInfo(_ ledger: LedgerKind) throws {
        let fixture = try StoreAPIFixture(ledger)
        try fixture.record(
            StoreAPIFixture.purchase(
                "alice", Self.removeAds, "1000", day: 2,
                extra: #""app_account_token": "956328D9-CC6A-47F4-BE40-6953FB0AB6C7""#))
        let transaction = try fixture.call("transaction_info", ["id": .string("1000")])["transaction"]
        #expect(transaction?["transactionId"] == .string("1000"))
        #expect(transaction?["originalTransactionId"] == .string("1000"))
        #expect(transaction?["bundleId"] == .string(StoreAPIFixture.bundleID))
        #expect(transaction?["productId"] == .string(Self.removeAds))
        #expect(transaction?["purchaseDate"] == .integer(1_717_372_800_000))
        #expect(transaction?["originalPurchaseDate"] == .integer(1_717_372_800_000))
        #expect(transaction?["quantity"] == .integer(1))
        #expect(transaction?["rawType"] == .string("Non-Consumable"))
        #expect(transaction?["rawInAppOwnershipType"] == .string("PURCHASED"))
        #expect(transaction?["rawEnvironment"] == .string("Production"))
        #expect(transaction?["rawTransactionReason"] == .string("PURCHASE"))
        #expect(transaction?["storefront"] == .string("USA"))
        #expect(transaction?["storefrontId"] == .string("143441"))
        #expect(transaction?["appAccountToken"] == .string("956328d9-cc6a-47f4-be40-6953fb0ab6c7"))
        #expect(transaction?["signedDate"] != nil)
        #expect(transaction?["expiresDate"] == nil)
        #expect(transaction?["revocationDate"] == nil)
    }

    @Test("a subscription's transaction carries its expiry, web order line item and subscription group")
    func subscriptionTransaction() throws {
        let fixture = try StoreAPIFixture()
        try fixture.record(
            StoreAPIFixture.purchase(
                "alice", Self.monthly, "2000", day: 0,
                extra: #""expires_date_ms": \#(Self.future), "web_order_line_item_id": "90001""#))
        let transaction = try fixture.call("transaction_info", ["id": .string("2000")])["transaction"]
        #expect(transaction?["rawType"] == .string("Auto-Renewable Subscription"))
        #expect(transaction?["expiresDate"] == .integer(Self.future))
        #expect(transaction?["webOrderLineItemId"] == .string("90001"))
        #expect(transaction?["subscriptionGroupIdentifier"] == .string("20652543"))
    }

    @Test("a refunded transaction carries revocationDate and revocationReason")
    func refundedTransaction() throws {
        let fixture = try StoreAPIFixture()
        try fixture.record(StoreAPIFixture.purchase("alice", Self.removeAds, "1000", day: 2))
        let refund = try fixture.service.post(
            "/v1/transactions/1000/cancellation", json: #"{"cancellation_date_ms": 1717459200000}"#)
        #expect(refund.status == 201)
        let transaction = try fixture.call("transaction_info", ["id": .string("1000")])["transaction"]
        #expect(transaction?["revocationDate"] == .integer(1_717_459_200_000))
        #expect(transaction?["rawRevocationReason"] == .integer(0))
    }

    @Test("an unknown transaction id, or one of another app, is Apple's 4040010")
    func unknownTransaction() throws {
        let fixture = try StoreAPIFixture()
        _ = try fixture.service.post(
            "/v1/transactions",
            json: #"{"customer_id": "bob", "bundle_id": "com.example.other", "product_id": "p", "#
                + #""transaction_id": "3000", "purchase_date_ms": 1717200000000}"#)
        for id in ["999", "3000"] {
            let error = try fixture.call("transaction_info", ["id": .string(id)])["api_error"]
            #expect(error?["status"] == .integer(404))
            #expect(error?["error_code"] == .integer(4_040_010))
        }
    }

    @Test(
        "Get Transaction History pages the customer's transactions 20 at a time in purchase order",
        arguments: LedgerKind.allCases)
    func historyPages(_ ledger: LedgerKind) throws {
        let fixture = try StoreAPIFixture(ledger)
        for day in 0..<25 {
            try fixture.record(StoreAPIFixture.purchase("alice", Self.coins, "\(5000 + day)", day: day))
        }
        try fixture.record(StoreAPIFixture.purchase("bob", Self.coins, "6000", day: 3))
        let first = try fixture.call("history", ["id": .string("5003")])
        #expect(first["has_more"] == .bool(true))
        #expect(first["app_apple_id"] == .integer(StoreAPIFixture.appAppleID))
        #expect(first["environment"] == .string("Production"))
        #expect(Self.ids(first) == (0..<20).map { "\(5000 + $0)" })
        guard case .string(let revision)? = first["revision"] else {
            Issue.record("no revision in \(first)")
            return
        }
        let second = try fixture.call("history", ["id": .string("5003"), "revision": .string(revision)])
        #expect(second["has_more"] == .bool(false))
        #expect(Self.ids(second) == (20..<25).map { "\(5000 + $0)" })
    }

    @Test("history sorts descending and filters by product type, product, date and revocation")
    func historyFilters() throws {
        let fixture = try StoreAPIFixture()
        try fixture.record(StoreAPIFixture.purchase("alice", Self.removeAds, "1000", day: 1))
        try fixture.record(StoreAPIFixture.purchase("alice", Self.coins, "1001", day: 2))
        try fixture.record(
            StoreAPIFixture.purchase(
                "alice", Self.monthly, "1002", day: 3, extra: #""expires_date_ms": \#(Self.future)"#))
        _ = try fixture.service.post(
            "/v1/transactions/1001/cancellation", json: #"{"cancellation_date_ms": 1717459200000}"#)
        let day = { (offset: Int64) in JSONValue.integer(1_717_200_000_000 + offset * 86_400_000) }
        let history = { (arguments: [String: JSONValue]) in
            StoreAPIFixture.request("history", arguments.merging(["id": .string("1000")]) { $1 })
        }
        let results = try fixture.client([
            history(["sort": .string("DESCENDING")]),
            history(["product_types": .array([.string("AUTO_RENEWABLE")])]),
            history(["product_ids": .array([.string(Self.coins)])]),
            history(["start": day(2), "end": day(3)]),
            history(["revoked": .bool(true)]),
            history(["groups": .array([.string("20652543")])]),
        ])
        #expect(Self.ids(results[0]) == ["1002", "1001", "1000"])
        #expect(Self.ids(results[1]) == ["1002"])
        #expect(Self.ids(results[2]) == ["1001"])
        #expect(Self.ids(results[3]) == ["1001"])
        #expect(Self.ids(results[4]) == ["1001"])
        #expect(Self.ids(results[5]) == ["1002"])
    }

    @Test("version 1 of the history path, the default of Apple's library, answers as version 2")
    func historyVersion1() throws {
        let fixture = try StoreAPIFixture()
        try fixture.record(StoreAPIFixture.purchase("alice", Self.coins, "1000", day: 1))
        try fixture.record(StoreAPIFixture.purchase("alice", Self.removeAds, "1001", day: 2))
        let history = try fixture.call("history", ["id": .string("1000"), "version": .string("v1")])
        #expect(Self.ids(history) == ["1000", "1001"])
    }

    @Test("Get Refund History lists the customer's refunded transactions only")
    func refundHistory() throws {
        let fixture = try StoreAPIFixture()
        try fixture.record(StoreAPIFixture.purchase("alice", Self.coins, "1000", day: 1))
        try fixture.record(StoreAPIFixture.purchase("alice", Self.removeAds, "1001", day: 2))
        _ = try fixture.service.post(
            "/v1/transactions/1001/cancellation", json: #"{"cancellation_date_ms": 1717459200000}"#)
        let refunds = try fixture.call("refund_history", ["id": .string("1000")])
        #expect(Self.ids(refunds) == ["1001"])
        #expect(refunds["has_more"] == .bool(false))
    }

    @Test("history finds the customer by an original transaction id too")
    func historyByOriginalTransaction() throws {
        let fixture = try StoreAPIFixture()
        try fixture.record(
            StoreAPIFixture.purchase(
                "alice", Self.monthly, "2001", day: 30,
                extra: #""original_transaction_id": "2000", "expires_date_ms": \#(Self.future)"#))
        let history = try fixture.call("history", ["id": .string("2000")])
        #expect(Self.ids(history) == ["2001"])
    }

    @Test("a revision that is not one of this query is Apple's 4000005; a bad sort 4000021")
    func invalidRevisionAndSort() throws {
        let fixture = try StoreAPIFixture()
        try fixture.record(StoreAPIFixture.purchase("alice", Self.coins, "1000", day: 1))
        let error = try fixture.call("history", ["id": .string("1000"), "revision": .string("bm90LWEtcmV2aXNpb24")])
        #expect(error["api_error"]?["error_code"] == .integer(4_000_005))
        let token = try StoreAPIFixture.token(expires: ReceiptService.systemTime().adding(seconds: 300))
        let reply = try fixture.service.send("GET", "/inApps/v2/history/1000?sort=SIDEWAYS", token: token)
        #expect(reply.status == 400)
        #expect(try reply.json()["errorCode"] == .integer(4_000_021))
    }

    @Test(
        "Get All Subscription Statuses gives each group's latest transaction, status and renewal info",
        arguments: LedgerKind.allCases)
    func subscriptionStatuses(_ ledger: LedgerKind) throws {
        let fixture = try StoreAPIFixture(ledger)
        try fixture.record(
            StoreAPIFixture.purchase(
                "alice", Self.monthly, "2000", day: 0, extra: #""expires_date_ms": 1719792000000"#))
        try fixture.record(
            StoreAPIFixture.purchase(
                "alice", Self.monthly, "2001", day: 30,
                extra: #""original_transaction_id": "2000", "expires_date_ms": \#(Self.future)"#))
        try fixture.record(StoreAPIFixture.purchase("alice", Self.removeAds, "1000", day: 1))
        let answer = try fixture.call("statuses", ["id": .string("1000")])
        #expect(answer["bundle_id"] == .string(StoreAPIFixture.bundleID))
        #expect(answer["groups"]?[0]?["group"] == .string("20652543"))
        let last = answer["groups"]?[0]?["last"]
        #expect(last?[1] == nil, "one subscription: one latest transaction")
        #expect(last?[0]?["status"] == .integer(1))
        #expect(last?[0]?["original_transaction_id"] == .string("2000"))
        #expect(last?[0]?["transaction"]?["transactionId"] == .string("2001"))
        #expect(last?[0]?["renewal"]?["originalTransactionId"] == .string("2000"))
        #expect(last?[0]?["renewal"]?["rawAutoRenewStatus"] == .integer(1))
        #expect(last?[0]?["renewal"]?["renewalDate"] == .integer(Self.future))
    }

    @Test("an expired subscription is status 2, a refunded one 5, and status arguments filter them")
    func expiredAndRevoked() throws {
        let fixture = try StoreAPIFixture()
        try fixture.record(
            StoreAPIFixture.purchase(
                "alice", Self.monthly, "2000", day: 0, extra: #""expires_date_ms": 1719792000000"#))
        try fixture.record(
            StoreAPIFixture.purchase(
                "alice", Self.monthly, "3000", day: 1, extra: #""expires_date_ms": \#(Self.future)"#))
        _ = try fixture.service.post(
            "/v1/transactions/3000/cancellation", json: #"{"cancellation_date_ms": 1717459200000}"#)
        let results = try fixture.client([
            StoreAPIFixture.request("statuses", ["id": .string("2000")]),
            StoreAPIFixture.request("statuses", ["id": .string("2000"), "status": .array([.integer(5)])]),
        ])
        let statuses = { (result: JSONValue) -> [String: JSONValue] in
            var found: [String: JSONValue] = [:]
            for index in 0..<4 {
                guard let last = result["groups"]?[0]?["last"]?[index],
                    case .string(let original)? = last["original_transaction_id"]
                else { break }
                found[original] = last["status"]
            }
            return found
        }
        #expect(statuses(results[0]) == ["2000": .integer(2), "3000": .integer(5)])
        #expect(statuses(results[1]) == ["3000": .integer(5)])
        #expect(results[0]["groups"]?[0]?["last"]?[0]?["renewal"]?["rawAutoRenewStatus"] == .integer(0))
    }

    @Test("requests without a valid API token are 401 with Apple's error body")
    func tokenRefused() throws {
        let fixture = try StoreAPIFixture()
        try fixture.record(StoreAPIFixture.purchase("alice", Self.coins, "1000", day: 1))
        let now = ReceiptService.systemTime()
        let tokens: [String?] = [
            nil, ServiceFixture.token,
            try StoreAPIFixture.token(expires: now.adding(seconds: -10)),
            try StoreAPIFixture.token(bundleID: "com.example.other", expires: now.adding(seconds: 300)),
            try StoreAPIFixture.token(issuedAt: now, expires: now.adding(seconds: 3700)),
        ]
        for token in tokens {
            let reply = try fixture.service.send("GET", "/inApps/v1/transactions/1000", token: token)
            #expect(reply.status == 401)
            #expect(reply.headers["content-type"] == "application/json")
            #expect(try reply.json()["errorCode"] == .integer(4_010_000))
        }
        let good = try StoreAPIFixture.token(issuedAt: now, expires: now.adding(seconds: 300))
        #expect(try fixture.service.send("GET", "/inApps/v1/transactions/1000", token: good).status == 200)
    }

    @Test("a body that is not JSON on Apple's paths is Apple's general bad request, 4000000")
    func unreadableBody() throws {
        let fixture = try StoreAPIFixture()
        let token = try StoreAPIFixture.token(expires: ReceiptService.systemTime().adding(seconds: 300))
        let reply = try fixture.service.send("POST", "/inApps/v1/notifications/history", body: [], token: token)
        #expect(reply.status == 400)
        #expect(try reply.json()["errorCode"] == .integer(4_000_000))
    }

    @Test("without store_api, Apple's paths answer 404 with Apple's error body")
    func notConfigured() throws {
        let service = try ServiceFixture()
        let token = try StoreAPIFixture.token(expires: ReceiptService.systemTime().adding(seconds: 300))
        let reply = try service.send("GET", "/inApps/v1/transactions/1000", token: token)
        #expect(reply.status == 404)
        #expect(try reply.json()["errorCode"] == .integer(4_040_003))
    }

    /// The transaction ids of a history result, in order.
    static func ids(_ result: JSONValue) -> [String] {
        guard case .array(let transactions)? = result["transactions"] else { return [] }
        return transactions.compactMap {
            guard case .string(let id)? = $0["transactionId"] else { return nil }
            return id
        }
    }
}

extension ReceiptDate {
    /// This instant moved by `seconds`.
    func adding(seconds: Int64) -> ReceiptDate {
        ReceiptDate(millisecondsSince1970: millisecondsSince1970 + seconds * 1000)
    }
}
