import Entitlements
import Foundation
import ReceiptCrypto
import ReceiptModel
import ReceiptService
import ReceiptSigner
import ReceiptVerifier
import StrictJSON
import Testing
import ZoneInfo

@Suite("POST /verifyReceipt answers as Apple's verifyReceipt does")
struct VerifyReceiptEndpointTests {
    let receipt = sampleReceipt(purchases: [("com.example.coins", "1001", 1), ("com.example.pro", "1002", 3)])

    /// The receipt with one purchase turned into an auto-renewable subscription (it expires).
    var subscribed: Receipt {
        var subscribed = receipt
        subscribed.inAppPurchases[1].expiresDate = ReceiptDate(millisecondsSince1970: 1_720_000_000_000)
        return subscribed
    }

    @Test("a valid receipt gets status 0 and the receipt with Apple's *_pst twins; without a subscription nothing else")
    func validReceipt() throws {
        let fixture = try ServiceFixture()
        let reply = try fixture.post(
            "/verifyReceipt", json: ServiceFixture.verifyRequest(try ServiceFixture.signed(receipt)))
        #expect(reply.status == 200)
        let json = try reply.json()
        #expect(json["status"] == .integer(0))
        #expect(json["environment"] == .string("Production"))
        guard case .object(var answered)? = json["receipt"] else {
            Issue.record("no receipt in \(json)")
            return
        }
        for key in ["request_date", "request_date_ms", "request_date_pst"] {
            #expect(answered[key] != nil)
            answered[key] = nil
        }
        let pacific = try TimeZoneRules.system("America/Los_Angeles")
        #expect(answered == receipt.verifyReceiptJSON(pacificTime: pacific))
        #expect(json["latest_receipt_info"] == nil, "Apple sends it only with auto-renewable subscriptions")
        #expect(json["latest_receipt"] == nil, "Apple sends latest_receipt only with auto-renewable subscriptions")
    }

    @Test("a receipt with a subscription also gets latest_receipt_info, oldest first, and latest_receipt as sent")
    func latestReceipt() throws {
        let fixture = try ServiceFixture()
        let signed = try ServiceFixture.signed(subscribed)
        let json = try fixture.post("/verifyReceipt", json: ServiceFixture.verifyRequest(signed)).json()
        #expect(json["latest_receipt_info"]?.transactionIDs == ["1001", "1002"])
        #expect(json["latest_receipt"] == .string(Data(signed).base64EncodedString()))
    }

    @Test(
        "latest_receipt_info is in purchase order, then transaction id, whatever the receipt's order; in_app keeps the receipt's"
    )
    func latestReceiptInfoOrder() throws {
        let fixture = try ServiceFixture()
        var shuffled = sampleReceipt(purchases: [
            ("com.example.pro", "1003", 3), ("com.example.coins", "1002", 1), ("com.example.coins", "1001", 1),
            ("com.example.gems", "1000", 2),
        ])
        shuffled.inAppPurchases[0].expiresDate = ReceiptDate(millisecondsSince1970: 1_720_000_000_000)
        let json = try fixture.post(
            "/verifyReceipt", json: ServiceFixture.verifyRequest(try ServiceFixture.signed(shuffled))
        ).json()
        #expect(json["latest_receipt_info"]?.transactionIDs == ["1001", "1002", "1000", "1003"])
        #expect(json["receipt"]?["in_app"]?.transactionIDs == ["1003", "1002", "1001", "1000"])
    }

    @Test(
        "receipt data sent with line breaks and spaces (MIME style, anywhere in the text) comes back in latest_receipt without them",
        arguments: [
            [76: "\r\n", 152: "\r\n"], [1: " "], [7: "\n", 8: " "], [-1: "\n"],
        ] as [[Int: String]])
    func latestReceiptWithoutLayout(breaks: [Int: String]) throws {
        let fixture = try ServiceFixture()
        let signed = try ServiceFixture.signed(subscribed)
        let plain = Data(signed).base64EncodedString()
        var laidOut = ""
        for (offset, character) in plain.enumerated() {
            laidOut += breaks[offset].map { #"\#(JSONValue.string($0).serialized().dropFirst().dropLast())"# } ?? ""
            laidOut.append(character)
        }
        laidOut += breaks[-1].map { #"\#(JSONValue.string($0).serialized().dropFirst().dropLast())"# } ?? ""
        let json = try fixture.post("/verifyReceipt", json: #"{"receipt-data":"\#(laidOut)"}"#).json()
        #expect(json["status"] == .integer(0))
        #expect(json["latest_receipt"] == .string(plain))
    }

    @Test("when the ledger knows newer transactions, latest_receipt is a fresh receipt signed by the service")
    func freshLatestReceipt() throws {
        let fixture = try ServiceFixture()
        let renewal =
            #"{"customer_id":"c1","bundle_id":"com.example.game","product_id":"com.example.pro","#
            + #""transaction_id":"1004","original_transaction_id":"1002","purchase_date_ms":"1720000000000","#
            + #""expires_date_ms":"1722600000000"}"#
        let known =
            #"{"customer_id":"c1","bundle_id":"com.example.game","product_id":"com.example.coins","#
            + #""transaction_id":"1001","purchase_date_ms":"1717286400000"}"#
        #expect(try fixture.post("/v1/transactions", json: known).status == 201)
        #expect(try fixture.post("/v1/transactions", json: renewal).status == 201)
        let signed = try ServiceFixture.signed(subscribed)
        let json = try fixture.post("/verifyReceipt", json: ServiceFixture.verifyRequest(signed)).json()
        #expect(json["latest_receipt_info"]?.transactionIDs == ["1001", "1002", "1004"])
        guard case .string(let latest)? = json["latest_receipt"], let der = Data(base64Encoded: latest) else {
            Issue.record("latest_receipt is missing: \(json)")
            return
        }
        #expect([UInt8](der) != signed)
        let verified = try ReceiptVerifier(trustAnchors: [ServiceFixture.chain.root]).verify([UInt8](der))
        #expect(verified.receipt.inAppPurchases.map(\.transactionID) == ["1001", "1002", "1004"])
        #expect(verified.receipt.bundleID == subscribed.bundleID)
    }

    @Test("a catalog that names the app gives its subscriptions' entries their subscription_group_identifier")
    func subscriptionGroup() throws {
        let catalog = try Catalog(
            json: Array(
                #"{"bundle_id":"com.example.game","products":[{"id":"com.example.pro","type":"auto_renewable","#
                    .utf8) + Array(#""entitlements":["pro"],"group":"20662382","rank":1}]}"#.utf8))
        let fixture = try ServiceFixture { $0.catalogs = ["game": catalog] }
        let json = try fixture.post(
            "/verifyReceipt", json: ServiceFixture.verifyRequest(try ServiceFixture.signed(subscribed))
        ).json()
        guard case .array(let entries)? = json["latest_receipt_info"], entries.count == 2 else {
            Issue.record("unexpected latest_receipt_info in \(json)")
            return
        }
        #expect(entries[0]["subscription_group_identifier"] == nil, "a consumable has no group")
        #expect(entries[1]["subscription_group_identifier"] == .string("20662382"))
        #expect(json["receipt"]?["in_app"]?.transactionIDs == ["1001", "1002"])
    }

    @Test("exclude-old-transactions keeps only the newest transaction of each subscription")
    func excludeOldTransactions() throws {
        var renewals = receipt
        let week: Int64 = 7 * 86_400_000
        renewals.inAppPurchases =
            (0..<3).map { index in
                InAppPurchase(
                    productID: "com.example.weekly", transactionID: "20\(index)",
                    purchaseDate: ReceiptDate(millisecondsSince1970: 1_717_200_000_000 + Int64(index) * week),
                    originalTransactionID: "200",
                    expiresDate: ReceiptDate(millisecondsSince1970: 1_717_200_000_000 + Int64(index + 1) * week))
            } + [receipt.inAppPurchases[0]]
        let fixture = try ServiceFixture()
        let signed = try ServiceFixture.signed(renewals)
        let all = try fixture.post("/verifyReceipt", json: ServiceFixture.verifyRequest(signed)).json()
        #expect(all["latest_receipt_info"]?.transactionIDs == ["200", "1001", "201", "202"])
        let latest = try fixture.post(
            "/verifyReceipt", json: ServiceFixture.verifyRequest(signed, extra: #","exclude-old-transactions":true"#)
        ).json()
        #expect(latest["latest_receipt_info"]?.transactionIDs == ["1001", "202"])
    }

    @Test(
        "a request that is not a readable verifyReceipt request gets status 21000",
        arguments: [
            "not json", "{}", #"{"receipt-data":7}"#, "[1]", #"{"receipt-data":"AAAA","exclude-old-transactions":3}"#,
        ])
    func unreadableRequest(body: String) throws {
        let fixture = try ServiceFixture()
        let reply = try fixture.post("/verifyReceipt", json: body)
        #expect(reply.status == 200)
        #expect(try reply.json()["status"] == .integer(21000))
        #expect(reply.errorCode == "unreadable_request")
    }

    @Test("a GET instead of a POST gets status 21000, as Apple answers it")
    func getIsStatus21000() throws {
        let fixture = try ServiceFixture()
        let reply = try fixture.send("GET", "/verifyReceipt")
        #expect(reply.status == 200)
        #expect(try reply.json()["status"] == .integer(21000))
    }

    @Test("a method other than POST and GET is 405 with Allow naming both")
    func otherMethods() throws {
        let reply = try ServiceFixture().send("PUT", "/verifyReceipt", body: Array("{}".utf8))
        #expect(reply.status == 405)
        #expect(reply.headers["allow"] == "POST, GET")
    }

    @Test("receipt data that is not a receipt gets status 21002 with the verifier's code")
    func malformedReceipt() throws {
        let fixture = try ServiceFixture()
        let reply = try fixture.post("/verifyReceipt", json: #"{"receipt-data":"MIIBAAAA"}"#)
        #expect(try reply.json()["status"] == .integer(21002))
        #expect(reply.errorCode == "malformed")
    }

    @Test("a receipt signed by a chain the service does not trust gets status 21003")
    func untrustedReceipt() throws {
        let fixture = try ServiceFixture()
        let other = try DevelopmentChain.create(algorithm: .ecP256)
        let signed = try ReceiptSigner(credentials: other.credentials).sign(receipt)
        let reply = try fixture.post("/verifyReceipt", json: ServiceFixture.verifyRequest(signed))
        #expect(try reply.json()["status"] == .integer(21003))
        #expect(reply.errorCode == "untrusted_chain")
    }

    @Test("with a shared secret configured, a missing or wrong password gets 21004 and the right one passes")
    func sharedSecret() throws {
        let fixture = try ServiceFixture { $0.sharedSecret = "0123456789abcdef" }
        let signed = try ServiceFixture.signed(receipt)
        for extra in ["", #","password":"wrong""#] {
            let reply = try fixture.post("/verifyReceipt", json: ServiceFixture.verifyRequest(signed, extra: extra))
            #expect(try reply.json()["status"] == .integer(21004))
        }
        let right = try fixture.post(
            "/verifyReceipt", json: ServiceFixture.verifyRequest(signed, extra: #","password":"0123456789abcdef""#))
        #expect(try right.json()["status"] == .integer(0))
    }

    @Test("a sandbox receipt sent to production gets 21007, a production receipt sent to sandbox 21008")
    func environmentMismatch() throws {
        let production = try ServiceFixture()
        let sandboxReceipt = try ServiceFixture.signed(
            sampleReceipt(type: "ProductionSandbox", purchases: [("com.example.pro", "1", 0)]))
        #expect(
            try production.post("/verifyReceipt", json: ServiceFixture.verifyRequest(sandboxReceipt)).json()["status"]
                == .integer(21007))
        let sandbox = try ServiceFixture { $0.environment = .sandbox }
        let reply = try sandbox.post(
            "/verifyReceipt", json: ServiceFixture.verifyRequest(try ServiceFixture.signed(receipt)))
        #expect(try reply.json()["status"] == .integer(21008))
        #expect(try reply.json()["environment"] == .string("Sandbox"))
        #expect(
            try sandbox.post("/verifyReceipt", json: ServiceFixture.verifyRequest(sandboxReceipt)).json()["status"]
                == .integer(0))
    }

    @Test("transactions and refunds recorded after the receipt was issued appear in latest_receipt_info")
    func ledgerBringsReceiptUpToDate() throws {
        let fixture = try ServiceFixture()
        for (transaction, day) in [("1001", 1), ("1003", 9)] {
            let body =
                #"{"customer_id":"c1","bundle_id":"com.example.game","product_id":"com.example.coins","#
                + #""transaction_id":"\#(transaction)","purchase_date_ms":"\#(1_717_200_000_000 + Int64(day) * 86_400_000)"}"#
            #expect(try fixture.post("/v1/transactions", json: body).status == 201)
        }
        #expect(
            try fixture.post(
                "/v1/transactions/1001/cancellation", json: #"{"cancellation_date":"2024-06-20T00:00:00Z"}"#
            )
            .status == 201)
        let json = try fixture.post(
            "/verifyReceipt", json: ServiceFixture.verifyRequest(try ServiceFixture.signed(subscribed))
        )
        .json()
        #expect(json["latest_receipt_info"]?.transactionIDs == ["1001", "1002", "1003"])
        guard case .array(let entries)? = json["latest_receipt_info"] else { return }
        #expect(entries[0]["cancellation_date"] == .string("2024-06-20 00:00:00 Etc/GMT"))
        #expect(entries[0]["cancellation_date_pst"] == .string("2024-06-19 17:00:00 America/Los_Angeles"))
        #expect(entries[1]["cancellation_date"] == nil)
    }

    @Test("when verification requires a token, a request without one is refused with 401")
    func verificationCanRequireToken() throws {
        let fixture = try ServiceFixture { $0.verifyRequiresToken = true }
        let body = ServiceFixture.verifyRequest(try ServiceFixture.signed(receipt))
        let refused = try fixture.post("/verifyReceipt", json: body, token: nil)
        #expect(refused.status == 401)
        #expect(refused.errorCode == "unauthorized")
        #expect(try fixture.post("/verifyReceipt", json: body).json()["status"] == .integer(0))
    }
}

extension JSONValue {
    /// The `transaction_id` of each element of an array of purchases.
    var transactionIDs: [String] {
        guard case .array(let elements) = self else { return [] }
        return elements.compactMap { element in
            if case .string(let id)? = element["transaction_id"] { return id }
            return nil
        }
    }
}
