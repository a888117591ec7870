import Foundation
import ReceiptCrypto
import ReceiptService
import StrictJSON
import Testing

/// Notifications nobody here signed, delivered to the running server (`Vectors/SOURCES.md`): a real TEST
/// notification Apple sent to an app (`aporat/`, Apple Root CA - G3, 2022) and the test notification of Apple's own
/// App Store Server Library (`apple-assl/`, signed by that library's test CA). Both are Sandbox notifications.
@Suite("Real notifications through POST /v1/notifications/apple")
struct RealAppleNotificationTests {
    static let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Vectors")
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func certificate(_ path: URL) throws -> Certificate {
        try Certificate(derEncoded: [UInt8](try Data(contentsOf: path)))
    }
    static func appleRootG3() throws -> Certificate {
        try certificate(root.appendingPathComponent("certs/apple/AppleRootCA-G3.cer"))
    }
    static func libraryTestCA() throws -> Certificate {
        try certificate(vectors.appendingPathComponent("apple-assl/testCA.der"))
    }

    /// The body Apple sent: `{"signedPayload": …}` as stored by the app that received it.
    static func appleBody() throws -> String {
        String(
            decoding: try Data(
                contentsOf: vectors.appendingPathComponent("aporat/test-notification-signed-payload.json")),
            as: UTF8.self)
    }

    /// The library's test notification (a bare JWS) in the body Apple would POST.
    static func libraryBody() throws -> String {
        let jws = String(
            decoding: try Data(contentsOf: vectors.appendingPathComponent("apple-assl/testNotification.jws")),
            as: UTF8.self
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        return JSONValue.object(JSONObject(["signedPayload": .string(jws)])).serialized()
    }

    /// A Sandbox service that accepts notifications for `bundleID` under `anchor`.
    static func service(
        _ ledger: LedgerKind, anchor: Certificate, bundleID: String,
        environment: ServiceConfiguration.Environment = .sandbox
    ) throws -> ServiceFixture {
        var failure: Error?
        let fixture = try ServiceFixture { configuration in
            do {
                try ledger.apply(to: &configuration)
            } catch {
                failure = error
            }
            configuration.environment = environment
            configuration.appleNotifications = ServiceConfiguration.AppleNotifications(
                trustAnchors: [anchor], bundleIDs: [bundleID], appAppleIDs: [1234])
        }
        if let failure { throw failure }
        return fixture
    }

    @Test(
        "Apple's real TEST notification verifies under Apple Root CA - G3 at its signedDate and is stored once",
        arguments: LedgerKind.allCases)
    func appleTestNotification(ledger: LedgerKind) throws {
        let service = try Self.service(ledger, anchor: Self.appleRootG3(), bundleID: "com.Abilities")
        let reply = try service.post("/v1/notifications/apple", json: Self.appleBody(), token: nil)
        #expect(reply.status == 200)
        let answer = try reply.json()
        #expect(answer["notification_uuid"] == .string("5e09dcfc-205e-4ea1-9883-96676f394992"))
        #expect(answer["notification_type"] == .string("TEST"))
        #expect(answer["signed_date"] == .string("2022-09-02T12:41:32.884Z"))
        #expect(answer["effects"] == .array([]))
        #expect(answer["duplicate"] == .bool(false))
        let again = try service.post("/v1/notifications/apple", json: Self.appleBody(), token: nil)
        #expect(try again.json()["duplicate"] == .bool(true))
        let listed = try service.send("GET", "/v1/notifications?bundle_id=com.Abilities").json()
        #expect(listed["notifications"]?[0]?["notification_uuid"] == answer["notification_uuid"])
        #expect(listed["notifications"]?[1] == nil)
    }

    @Test(
        "Apple's App Store Server Library test notification verifies under that library's test CA",
        arguments: LedgerKind.allCases)
    func libraryTestNotification(ledger: LedgerKind) throws {
        let service = try Self.service(ledger, anchor: Self.libraryTestCA(), bundleID: "com.example")
        let reply = try service.post("/v1/notifications/apple", json: Self.libraryBody(), token: nil)
        #expect(reply.status == 200)
        #expect(try reply.json()["notification_uuid"] == .string("9ad56bd2-0bc6-42e0-af24-fd996d87a1e6"))
        #expect(try reply.json()["bundle_id"] == .string("com.example"))
    }

    @Test("Apple's real notification is refused under another anchor: 403 untrusted_chain, nothing stored")
    func realNotificationUnderAnotherAnchor() throws {
        let service = try Self.service(.sqlite, anchor: Self.libraryTestCA(), bundleID: "com.Abilities")
        let reply = try service.post("/v1/notifications/apple", json: Self.appleBody(), token: nil)
        #expect(reply.status == 403)
        #expect(reply.errorCode == "untrusted_chain")
        #expect(
            try service.send("GET", "/v1/notifications?bundle_id=com.Abilities").json()["notifications"] == .array([]))
    }

    @Test("Apple's real notification is refused by a service for another app: 403 wrong_bundle_id")
    func realNotificationForAnotherApp() throws {
        let service = try Self.service(.sqlite, anchor: Self.appleRootG3(), bundleID: "com.example.game")
        let reply = try service.post("/v1/notifications/apple", json: Self.appleBody(), token: nil)
        #expect(reply.status == 403)
        #expect(reply.errorCode == "wrong_bundle_id")
    }

    @Test("Apple's real Sandbox notification is refused by a Production service: 403 wrong_environment")
    func realSandboxNotificationInProduction() throws {
        let service = try Self.service(
            .sqlite, anchor: Self.appleRootG3(), bundleID: "com.Abilities", environment: .production)
        let reply = try service.post("/v1/notifications/apple", json: Self.appleBody(), token: nil)
        #expect(reply.status == 403)
        #expect(reply.errorCode == "wrong_environment")
    }
}
