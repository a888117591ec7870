import Entitlements
import Foundation
import ReceiptCrypto
import ReceiptService
import StrictJSON
import Testing

/// The console's data: the inspector, the customer lookup, the notifications and the overview.
@Suite("The console's API")
struct ConsoleAPITests {
    static let appleRoot: Certificate = {
        do {
            return try Certificate(
                derEncoded: [UInt8](
                    try Data(
                        contentsOf: AppleAnswerTests.root.appendingPathComponent(
                            "certs/apple/AppleIncRootCertificate.cer"))))
        } catch {
            preconditionFailure("Apple's root could not be read: \(error)")
        }
    }()

    /// A real receipt of RevenueCat's sample app, as the app sent it (base64).
    static func realReceipt() throws -> [UInt8] {
        [UInt8](
            try Data(
                contentsOf: AppleAnswerTests.vectors.appendingPathComponent(
                    "revenuecat/base64encodedreceiptsample1.txt")))
    }

    /// A console that trusts Apple's root, with a session.
    static func inspector() throws -> (ConsoleFixture, ConsoleFixture.Session) {
        let fixture = try ConsoleFixture { $0.trustAnchors.append(appleRoot) }
        return (fixture, try fixture.session())
    }

    @Test("inspecting a real Apple receipt answers valid, its fields, its chain to Apple's root and its binding")
    func inspectReal() throws {
        let (fixture, session) = try Self.inspector()
        let reply = try fixture.send("POST", "/console/api/inspect", body: Self.realReceipt(), session: session)
        #expect(reply.status == 200)
        let answer = try reply.json()
        #expect(answer["format"] == .string("app_receipt"))
        #expect(answer["valid"] == .bool(true))
        #expect(answer["failure"] == .null)
        #expect(answer["fields"]?["bundle_id"] == .string("com.revenuecat.sampleapp"))
        guard case .array(let chain)? = answer["chain"] else {
            Issue.record("no chain: \(answer)")
            return
        }
        #expect(chain.count == 3)
        #expect(chain.allSatisfy { $0["valid_at_checked_instant"] == .bool(true) })
        guard case .string(let root)? = chain.last?["subject"] else { return }
        #expect(root.contains("Apple Root CA"))
        #expect(answer["device_binding"]?["bound"] == .bool(true))
        guard case .string(let checked)? = answer["checked_at"] else { return }
        #expect(checked.hasSuffix("Z"))
    }

    @Test("inspecting the receipt with a byte of its signature flipped answers invalid, signature, and why")
    func inspectTampered() throws {
        let (fixture, session) = try Self.inspector()
        let text = String(decoding: try Self.realReceipt(), as: UTF8.self)
        var der = [UInt8](try #require(Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines))))
        // The SignerInfo's signature is the last element of the CMS structure.
        der[der.count - 1] ^= 0x01
        let answer = try fixture.send("POST", "/console/api/inspect", body: der, session: session).json()
        #expect(answer["valid"] == .bool(false))
        #expect(answer["failure"]?["check"] == .string("signature"))
        #expect(answer["failure"]?["code"] == .string("invalid_signature"))
        guard case .string(let explanation)? = answer["failure"]?["explanation"] else {
            Issue.record("no explanation: \(answer)")
            return
        }
        #expect(explanation.contains("changed after it was signed"))
        #expect(answer["fields"]?["bundle_id"] == .string("com.revenuecat.sampleapp"))
    }

    /// Real iOS 6 receipts (they carry their leaf only) and the intermediate of Apple's that issued it.
    static let legacyReceipts = [
        ("cargobay/legacy-autorenew-gagplus.b64", "AppleITunesStoreCertificationAuthority.cer"),
        ("apple_receipt-koenrh/valid_receipt.b64", "AppleWWDRCA.cer"),
    ]

    /// An iOS 6 receipt of `Tests/LegacyReceiptTests/Vectors/` as an app sent it (base64).
    static func legacyReceipt(_ name: String) throws -> [UInt8] {
        [UInt8](
            try Data(
                contentsOf: AppleAnswerTests.root.appendingPathComponent("Tests/LegacyReceiptTests/Vectors/\(name)")))
    }

    /// A console that trusts Apple's root with `intermediates` as the configuration file names them (relative to
    /// the package root), and a session.
    static func legacyInspector(intermediates: [String]) throws -> (ConsoleFixture, ConsoleFixture.Session) {
        let paths = intermediates.map { #""certs/apple/\#($0)""# }.joined(separator: ",")
        let read = try ServiceConfiguration(
            json: Array(
                #"{"environment":"Production","ledger":"x.sqlite","trust":["certs/apple/AppleIncRootCertificate.cer"],"#
                    .utf8) + Array(#""intermediates":[\#(paths)]}"#.utf8),
            baseDirectory: AppleAnswerTests.root.path)
        let fixture = try ConsoleFixture { configuration in
            configuration.trustAnchors += read.trustAnchors
            configuration.intermediates = read.intermediates
        }
        return (fixture, try fixture.session())
    }

    @Test(
        "an iOS 6 receipt is valid through the configured intermediate, its chain leaf, intermediate and Apple's root",
        arguments: legacyReceipts)
    func inspectLegacyWithIntermediate(receipt: String, intermediate: String) throws {
        let (fixture, session) = try Self.legacyInspector(
            intermediates: ["AppleITunesStoreCertificationAuthority.cer", "AppleWWDRCA.cer"])
        let reply = try fixture.send(
            "POST", "/console/api/inspect", body: Self.legacyReceipt(receipt), session: session)
        #expect(reply.status == 200)
        let answer = try reply.json()
        #expect(answer["format"] == .string("ios6_receipt"))
        #expect(answer["valid"] == .bool(true), "\(answer["failure"] ?? .null)")
        #expect(answer["failure"] == .null)
        #expect(answer["fields"]?["bid"]?.stringValue?.isEmpty == false)
        guard case .array(let chain)? = answer["chain"] else {
            Issue.record("no chain: \(answer)")
            return
        }
        #expect(chain.count == 3)
        #expect(chain.allSatisfy { $0["valid_at_checked_instant"] == .bool(true) })
        #expect(chain.last?["subject"]?.stringValue?.contains("CN=Apple Root CA") == true)
        let issuer = intermediate == "AppleWWDRCA.cer" ? "Worldwide Developer Relations" : "iTunes Store"
        #expect(chain.dropFirst().first?["subject"]?.stringValue?.contains(issuer) == true)
    }

    @Test(
        "without the intermediate an iOS 6 receipt is an untrusted chain naming the certificate to add",
        arguments: legacyReceipts)
    func inspectLegacyWithoutIntermediate(receipt: String, intermediate: String) throws {
        let other = Self.legacyReceipts.map(\.1).filter { $0 != intermediate }
        let (fixture, session) = try Self.legacyInspector(intermediates: other)
        let answer = try fixture.send(
            "POST", "/console/api/inspect", body: Self.legacyReceipt(receipt), session: session
        ).json()
        #expect(answer["format"] == .string("ios6_receipt"))
        #expect(answer["valid"] == .bool(false))
        #expect(answer["failure"]?["check"] == .string("chain"))
        #expect(answer["failure"]?["code"] == .string("untrusted_chain"))
        let message = answer["failure"]?["message"]?.stringValue ?? ""
        #expect(message.contains("certs/apple/\(intermediate)"), "\(message)")
        #expect(message.contains(#""intermediates""#), "\(message)")
        let explanation = answer["failure"]?["explanation"]?.stringValue ?? ""
        #expect(explanation.contains("intermediates"), "\(explanation)")
        #expect(answer["fields"]?["bid"]?.stringValue?.isEmpty == false, "the fields as read without trust")
        guard case .array(let chain)? = answer["chain"] else { return }
        #expect(chain.count == 1, "the leaf the receipt carries")
    }

    @Test("inspect needs the session's X-CSRF-Token: 403 without or with a wrong one, 200 with it")
    func inspectCSRF() throws {
        let (fixture, session) = try Self.inspector()
        let cookie = ["Cookie": "\(ConsoleFixture.cookieName)=\(session.id)"]
        let body = try Self.realReceipt()
        let without = try fixture.send("POST", "/console/api/inspect", body: body, headers: cookie)
        #expect(without.status == 403)
        #expect(without.errorCode == "csrf")
        let wrong = try fixture.send(
            "POST", "/console/api/inspect", body: body, headers: cookie.merging(["X-CSRF-Token": "x"]) { $1 })
        #expect(wrong.status == 403)
        #expect(try fixture.send("POST", "/console/api/inspect", body: body, session: session).status == 200)
    }

    @Test("garbage is inspected as an unreadable receipt, never a failure of the service")
    func inspectGarbage() throws {
        let (fixture, session) = try Self.inspector()
        var generator = SystemRandomNumberGenerator()
        for length in [1, 7, 300, 5000] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let reply = try fixture.send("POST", "/console/api/inspect", body: [0x30] + bytes, session: session)
            #expect(reply.status == 200, "\(length)")
            #expect(try reply.json()["valid"] == .bool(false))
            #expect(try reply.json()["failure"]?["check"] == .string("format"))
        }
        let eyJ = try fixture.send("POST", "/console/api/inspect", body: Array("eyJ.e30.!!".utf8), session: session)
        #expect(try eyJ.json()["valid"] == .bool(false))
    }

    @Test("an empty body, one that is no purchase proof, and one over max_receipt_bytes are refused with the reason")
    func inspectRefused() throws {
        let fixture = try ConsoleFixture { $0.verificationLimits.maximumInputSize = 2048 }
        let session = try fixture.session()
        let empty = try fixture.send("POST", "/console/api/inspect", body: Array(" \n".utf8), session: session)
        #expect(empty.status == 400)
        let pem = Array("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".utf8)
        let certificate = try fixture.send("POST", "/console/api/inspect", body: pem, session: session)
        #expect(certificate.status == 400)
        #expect(certificate.text.contains("PEM certificate"))
        let large = try fixture.send(
            "POST", "/console/api/inspect", body: [UInt8](repeating: 0x41, count: 2049), session: session)
        #expect(large.status == 413)
        #expect(large.text.contains("max_receipt_bytes"))
    }

    static let xss = "<img src=x onerror=alert(1)>"

    /// A console for `com.example.game` (its catalog) where alice bought the product ``xss`` (transaction 1000)
    /// and a subscription whose original transaction 2000 is not stored itself (renewal 2001).
    static func customers() throws -> (ConsoleFixture, ConsoleFixture.Session) {
        let catalog = try Catalog(json: Array(AppleNotificationFixture.catalog.utf8))
        let fixture = try ConsoleFixture { $0.catalogs = ["game": catalog] }
        for body in [
            #"{"customer_id":"alice","bundle_id":"com.example.game","product_id":"\#(xss)","#
                + #""transaction_id":"1000","purchase_date":"2024-06-05T12:00:00Z","quantity":1}"#,
            #"{"customer_id":"alice","bundle_id":"com.example.game","product_id":"com.example.pro.monthly","#
                + #""transaction_id":"2001","original_transaction_id":"2000","#
                + #""purchase_date":"2024-06-05T12:00:00Z","expires_date":"2099-07-05T12:00:00Z"}"#,
        ] {
            let reply = try fixture.service.post("/v1/transactions", json: body)
            guard reply.status == 201 else { throw FixtureError("recording: \(reply.status) \(reply.text)") }
        }
        return (fixture, try fixture.session())
    }

    @Test(
        "the customer is found by transaction id, original transaction id and customer id",
        arguments: [("1000", "transaction_id"), ("2000", "original_transaction_id"), ("alice", "customer_id")])
    func customer(query: String, matchedBy: String) throws {
        let (fixture, session) = try Self.customers()
        let reply = try fixture.send("GET", "/console/api/customer?query=\(query)", session: session)
        #expect(reply.status == 200)
        let answer = try reply.json()
        #expect(answer["customer_id"] == .string("alice"))
        #expect(answer["matched_by"] == .string(matchedBy))
        guard case .array(let apps)? = answer["apps"], apps.count == 1,
            case .array(let transactions)? = apps[0]["transactions"]
        else {
            Issue.record("no app: \(answer)")
            return
        }
        #expect(apps[0]["bundle_id"] == .string("com.example.game"))
        #expect(transactions.map { $0["transaction_id"] } == [.string("1000"), .string("2001")])
        #expect(transactions.map { $0["subscription"] } == [.bool(false), .bool(true)])
        #expect(apps[0]["entitlements"]?["pro"]?["state"] == .string("active"))
    }

    @Test("a product id that looks like HTML comes back as exactly that string in JSON")
    func customerMarkup() throws {
        let (fixture, session) = try Self.customers()
        let reply = try fixture.send("GET", "/console/api/customer?query=1000", session: session)
        guard case .array(let apps)? = try reply.json()["apps"],
            case .array(let transactions)? = apps.first?["transactions"]
        else {
            Issue.record("no transactions: \(reply.text)")
            return
        }
        #expect(transactions.first?["product_id"] == .string(Self.xss))
    }

    @Test("a query that is no customer, transaction or original transaction answers 404 not_found")
    func customerUnknown() throws {
        let (fixture, session) = try Self.customers()
        let reply = try fixture.send("GET", "/console/api/customer?query=bob", session: session)
        #expect(reply.status == 404)
        #expect(reply.errorCode == "not_found")
        #expect(try fixture.send("GET", "/console/api/customer", session: session).status == 400)
    }

    @Test("notifications lists those received from Apple and those sent from the outbox")
    func notifications() throws {
        let receiver = try NotificationReceiver()
        let store = try StoreAPIFixture(notificationURLs: [receiver.url]) { configuration in
            configuration.console = ServiceConfiguration.Console()
            configuration.appleNotifications = ServiceConfiguration.AppleNotifications(
                trustAnchors: [ServiceFixture.chain.root], bundleIDs: [AppleNotificationFixture.bundleID],
                appAppleIDs: [AppleNotificationFixture.appAppleID])
        }
        let fixture = ConsoleFixture(service: store.service)
        try store.record(StoreAPIFixture.purchase("alice", StoreAPITests.removeAds, "1000", day: 1))
        let delivered = try store.service.post(
            "/v1/notifications/apple",
            json: AppleNotificationFixture.body("SUBSCRIBED", transaction: AppleNotificationFixture.period(0)),
            token: nil)
        #expect(delivered.status == 200)
        let answer = try fixture.send("GET", "/console/api/notifications?limit=10", session: fixture.session())
            .json()
        guard case .array(let received)? = answer["received"], case .array(let sent)? = answer["sent"] else {
            Issue.record("no lists: \(answer)")
            return
        }
        #expect(received.map { $0["notification_type"] } == [.string("SUBSCRIBED")])
        #expect(received.first?["transaction_id"] == .string("7000"))
        #expect(sent.map { $0["notification_type"] } == [.string("ONE_TIME_CHARGE")])
        #expect(sent.first?["url"] == .string(receiver.url))
        #expect(sent.first?["transaction_id"] == .string("1000"))
    }

    @Test("the overview counts the requests made, their errors and verifications, in the last hour's minutes")
    func overview() throws {
        let fixture = try ConsoleFixture()
        let session = try fixture.session()
        _ = try fixture.service.send("GET", "/healthz", token: nil)
        _ = try fixture.service.send("GET", "/nowhere", token: nil)
        _ = try fixture.service.post("/verifyReceipt", json: #"{"receipt-data":"MIIBAAAA"}"#)
        let answer = try fixture.send("GET", "/console/api/overview", session: session).json()
        #expect(answer["health"] == .string("ok"))
        #expect(answer["ledger_transactions"] == .integer(0))
        guard case .array(let minutes)? = answer["minutes"] else {
            Issue.record("no minutes: \(answer)")
            return
        }
        #expect(minutes.count == 60)
        func total(_ key: (JSONValue) -> JSONValue?) -> Int64 {
            minutes.reduce(0) { sum, minute in
                guard case .number(let text)? = key(minute), let value = Int64(text) else { return sum }
                return sum + value
            }
        }
        // Sign-in, the session, health, the 404 and verifyReceipt; the overview counts once it is answered.
        #expect(total { $0["requests"] } == 5)
        #expect(total { $0["errors"] } == 1)
        #expect(total { $0["verifications"]?["malformed"] } == 1)
        guard case .string(let first)? = minutes.first?["minute"], case .string(let last)? = minutes.last?["minute"]
        else { return }
        #expect(first < last && last.hasSuffix(":00Z"))
    }
}
