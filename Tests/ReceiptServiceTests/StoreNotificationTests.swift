import Foundation
import HTTPServer
import ReceiptModel
import ReceiptService
import StrictJSON
import Testing

/// A receiver of Server Notifications on loopback: answers the first `failures` deliveries with 500, the rest
/// with 200, and keeps every body it was sent.
final class NotificationReceiver: @unchecked Sendable {
    private let lock = NSLock()
    private var bodies: [[UInt8]] = []
    private var acceptedBodies: [[UInt8]] = []
    private var failuresLeft: Int
    private var server: HTTPServer?

    init(failures: Int = 0) throws {
        failuresLeft = failures
        let server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0)) {
            [weak self] request in
            guard let self else { return HTTPResponse(status: 503) }
            return self.lock.withLock {
                self.bodies.append(request.body)
                guard self.failuresLeft == 0 else {
                    self.failuresLeft -= 1
                    return HTTPResponse(status: 500)
                }
                self.acceptedBodies.append(request.body)
                return HTTPResponse(status: 200)
            }
        }
        try server.start()
        self.server = server
    }

    deinit { server?.stop() }

    var url: String { "http://127.0.0.1:\(server?.port ?? 0)/apple" }

    var received: [[UInt8]] { lock.withLock { bodies } }

    /// The bodies answered with 200.
    var accepted: [[UInt8]] { lock.withLock { acceptedBodies } }

    /// Answers every delivery from now on with 200.
    func answerSuccess() { lock.withLock { failuresLeft = 0 } }

    /// The `signedPayload`s received, once `count` have arrived (within 20 s).
    func waitFor(_ count: Int) throws -> [String] {
        for _ in 0..<200 {
            let received = self.received
            if received.count >= count {
                return try received.map { body in
                    guard case .string(let payload)? = try JSONValue(parsing: body)["signedPayload"] else {
                        throw FixtureError("a delivery without signedPayload: \(String(decoding: body, as: UTF8.self))")
                    }
                    return payload
                }
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw FixtureError("\(count) deliveries expected, \(received.count) arrived within 20 s")
    }
}

/// The Server Notifications V2 the store sends about what it records, received on loopback and decoded by
/// Apple's own `SignedDataVerifier`; and Apple's notification endpoints, called by Apple's client.
@Suite("Server Notifications the store sends, as Apple's library reads them")
struct StoreNotificationTests {
    static let future: Int64 = 1_893_456_000_000

    /// Each payload decoded by Apple's verifier.
    func decoded(_ fixture: StoreAPIFixture, _ payloads: [String]) throws -> [JSONValue] {
        try fixture.client(
            payloads.map { StoreAPIFixture.request("decode_notification", ["signed_payload": .string($0)]) }
        )
        .map { $0["notification"] ?? .null }
    }

    @Test("a purchase of a non-consumable sends ONE_TIME_CHARGE with the signed transaction")
    func oneTimeCharge() throws {
        let receiver = try NotificationReceiver()
        let fixture = try StoreAPIFixture(notificationURLs: [receiver.url])
        let reply = try fixture.record(StoreAPIFixture.purchase("alice", StoreAPITests.removeAds, "1000", day: 1))
        #expect(reply.status == 201)
        let notification = try decoded(fixture, receiver.waitFor(1))[0]
        #expect(notification["rawNotificationType"] == .string("ONE_TIME_CHARGE"))
        #expect(notification["version"] == .string("2.0"))
        #expect(notification["notificationUUID"] != nil)
        #expect(notification["data"]?["appAppleId"] == .integer(StoreAPIFixture.appAppleID))
        #expect(notification["data"]?["rawEnvironment"] == .string("Production"))
        #expect(notification["data"]?["transaction"]?["transactionId"] == .string("1000"))
        #expect(notification["data"]?["renewal"] == nil)
    }

    @Test("the same purchase posted again sends nothing more")
    func repeatSendsNothing() throws {
        let receiver = try NotificationReceiver()
        let fixture = try StoreAPIFixture(notificationURLs: [receiver.url])
        let purchase = StoreAPIFixture.purchase("alice", StoreAPITests.removeAds, "1000", day: 1)
        try fixture.record(purchase)
        #expect(try fixture.record(purchase).status == 200)
        _ = try receiver.waitFor(1)
        try fixture.record(StoreAPIFixture.purchase("alice", StoreAPITests.coins, "1001", day: 2))
        let payloads = try decoded(fixture, receiver.waitFor(2))
        #expect(payloads.map { $0["data"]?["transaction"]?["transactionId"] } == [.string("1000"), .string("1001")])
    }

    @Test("a subscription sends SUBSCRIBED INITIAL_BUY, a renewal DID_RENEW, a second subscription RESUBSCRIBE")
    func subscriptionTypes() throws {
        let receiver = try NotificationReceiver()
        let fixture = try StoreAPIFixture(notificationURLs: [receiver.url])
        try fixture.record(
            StoreAPIFixture.purchase(
                "alice", StoreAPITests.monthly, "2000", day: 0, extra: #""expires_date_ms": 1719792000000"#))
        _ = try receiver.waitFor(1)
        try fixture.record(
            StoreAPIFixture.purchase(
                "alice", StoreAPITests.monthly, "2001", day: 30,
                extra: #""original_transaction_id": "2000", "expires_date_ms": \#(Self.future)"#))
        _ = try receiver.waitFor(2)
        try fixture.record(
            StoreAPIFixture.purchase(
                "alice", StoreAPITests.monthly, "3000", day: 90, extra: #""expires_date_ms": \#(Self.future)"#))
        let notifications = try decoded(fixture, receiver.waitFor(3))
        #expect(
            notifications.map { $0["rawNotificationType"] } == [
                .string("SUBSCRIBED"), .string("DID_RENEW"), .string("SUBSCRIBED"),
            ])
        #expect(notifications.map { $0["rawSubtype"] } == [.string("INITIAL_BUY"), nil, .string("RESUBSCRIBE")])
        #expect(notifications[1]["data"]?["renewal"]?["originalTransactionId"] == .string("2000"))
        #expect(notifications[1]["data"]?["rawStatus"] == .integer(1))
        #expect(notifications[1]["data"]?["transaction"]?["subscriptionGroupIdentifier"] == .string("20652543"))
    }

    @Test("a refund sends REFUND with the revocation date")
    func refund() throws {
        let receiver = try NotificationReceiver()
        let fixture = try StoreAPIFixture(notificationURLs: [receiver.url])
        try fixture.record(StoreAPIFixture.purchase("alice", StoreAPITests.removeAds, "1000", day: 1))
        _ = try receiver.waitFor(1)
        let refund = try fixture.service.post(
            "/v1/transactions/1000/cancellation", json: #"{"cancellation_date_ms": 1717459200000}"#)
        #expect(refund.status == 201)
        let notification = try decoded(fixture, receiver.waitFor(2))[1]
        #expect(notification["rawNotificationType"] == .string("REFUND"))
        #expect(notification["data"]?["transaction"]?["revocationDate"] == .integer(1_717_459_200_000))
    }

    @Test(
        "a receiver that fails twice gets the notification on the third attempt, with the same UUID",
        arguments: LedgerKind.allCases)
    func retries(_ ledger: LedgerKind) throws {
        let receiver = try NotificationReceiver(failures: 2)
        let fixture = try StoreAPIFixture(ledger, notificationURLs: [receiver.url])
        try fixture.record(StoreAPIFixture.purchase("alice", StoreAPITests.removeAds, "1000", day: 1))
        let payloads = try receiver.waitFor(3)
        #expect(Set(payloads).count == 1, "every attempt carries the same payload")
        let uuids = try decoded(fixture, payloads).map { $0["notificationUUID"] }
        #expect(Set(uuids.compactMap { $0 }).count == 1)
        let start = JSONValue.integer(ReceiptService.systemTime().millisecondsSince1970 - 60_000)
        let end = JSONValue.integer(ReceiptService.systemTime().millisecondsSince1970 + 60_000)
        var history = try fixture.call("notification_history", ["start": start, "end": end])
        for _ in 0..<50 where history["items"]?[0]?["attempts"]?[2] == nil {
            Thread.sleep(forTimeInterval: 0.1)
            history = try fixture.call("notification_history", ["start": start, "end": end])
        }
        let attempts = history["items"]?[0]?["attempts"]
        #expect(attempts?[0]?["rawSendAttemptResult"] == .string("UNSUCCESSFUL_HTTP_RESPONSE_CODE"))
        #expect(attempts?[1]?["rawSendAttemptResult"] == .string("UNSUCCESSFUL_HTTP_RESPONSE_CODE"))
        #expect(attempts?[2]?["rawSendAttemptResult"] == .string("SUCCESS"))
    }

    @Test("a receiver that never answers 200 gets one attempt and one per retry, then none")
    func retriesSpent() throws {
        let receiver = try NotificationReceiver(failures: 100)
        let fixture = try StoreAPIFixture(notificationURLs: [receiver.url])
        try fixture.record(StoreAPIFixture.purchase("alice", StoreAPITests.removeAds, "1000", day: 1))
        _ = try receiver.waitFor(3)
        Thread.sleep(forTimeInterval: 3)
        #expect(receiver.received.count == 3, "the retry schedule [1, 1] allows three attempts")
        let start = JSONValue.integer(ReceiptService.systemTime().millisecondsSince1970 - 60_000)
        let end = JSONValue.integer(ReceiptService.systemTime().millisecondsSince1970 + 60_000)
        let failures = try fixture.call(
            "notification_history", ["start": start, "end": end, "only_failures": .bool(true)])
        #expect(failures["items"]?[0] != nil)
    }

    @Test("a test notification is delivered, and its status has the attempt; an unknown token is 4040008")
    func testNotification() throws {
        let receiver = try NotificationReceiver()
        let fixture = try StoreAPIFixture(notificationURLs: [receiver.url])
        let requested = try fixture.call("test_notification")
        guard case .string(let token)? = requested["token"] else {
            Issue.record("no token in \(requested)")
            return
        }
        let notification = try decoded(fixture, receiver.waitFor(1))[0]
        #expect(notification["rawNotificationType"] == .string("TEST"))
        var status = try fixture.call("test_status", ["token": .string(token)])
        for _ in 0..<50 where status["attempts"]?[0] == nil {
            Thread.sleep(forTimeInterval: 0.1)
            status = try fixture.call("test_status", ["token": .string(token)])
        }
        #expect(status["notification"]?["notificationUUID"] == notification["notificationUUID"])
        #expect(status["attempts"]?[0]?["rawSendAttemptResult"] == .string("SUCCESS"))
        let unknown = try fixture.call("test_status", ["token": .string("no-such-token")])
        #expect(unknown["api_error"]?["error_code"] == .integer(4_040_008))
    }

    @Test("an app without notification URLs cannot request a test notification: 4040007")
    func testWithoutURL() throws {
        let fixture = try StoreAPIFixture()
        #expect(try fixture.call("test_notification")["api_error"]?["error_code"] == .integer(4_040_007))
    }

    @Test("notification history filters by type and transaction, pages 20 at a time, and refuses bad requests")
    func history() throws {
        let receiver = try NotificationReceiver()
        let fixture = try StoreAPIFixture(notificationURLs: [receiver.url])
        for day in 0..<22 {
            try fixture.record(StoreAPIFixture.purchase("alice", StoreAPITests.coins, "\(5000 + day)", day: day))
        }
        try fixture.record(
            StoreAPIFixture.purchase(
                "alice", StoreAPITests.monthly, "2000", day: 3, extra: #""expires_date_ms": \#(Self.future)"#))
        _ = try receiver.waitFor(23)
        let now = ReceiptService.systemTime().millisecondsSince1970
        let window: [String: JSONValue] = ["start": .integer(now - 60_000), "end": .integer(now + 60_000)]
        let first = try fixture.call("notification_history", window)
        #expect(first["has_more"] == .bool(true))
        guard case .string(let next)? = first["pagination_token"] else {
            Issue.record("no pagination token in \(first)")
            return
        }
        let second = try fixture.call(
            "notification_history", window.merging(["pagination_token": .string(next)]) { $1 })
        #expect(second["has_more"] == .bool(false))
        #expect(second["items"]?[2] != nil && second["items"]?[3] == nil, "23 notifications: 20, then 3")
        let subscribed = try fixture.call(
            "notification_history", window.merging(["type": .string("SUBSCRIBED")]) { $1 })
        #expect(subscribed["items"]?[0]?["notification"]?["data"]?["transaction"]?["transactionId"] == .string("2000"))
        #expect(subscribed["items"]?[1] == nil)
        let byTransaction = try fixture.call(
            "notification_history", window.merging(["transaction_id": .string("5007")]) { $1 })
        #expect(
            byTransaction["items"]?[0]?["notification"]?["data"]?["transaction"]?["transactionId"] == .string("5007"))
        #expect(byTransaction["items"]?[1] == nil)
        let old = try fixture.call(
            "notification_history", ["start": .integer(now - 200 * 86_400_000), "end": .integer(now)])
        #expect(old["api_error"]?["error_code"] == .integer(4_000_012))
        let backwards = try fixture.call(
            "notification_history", ["start": .integer(now), "end": .integer(now - 1000)])
        #expect(backwards["api_error"]?["error_code"] == .integer(4_000_013))
    }

    @Test(
        "a notification not yet delivered when the server stops is delivered by the next one, with the same UUID",
        arguments: LedgerKind.allCases)
    func deliveredAfterRestart(_ ledger: LedgerKind) throws {
        let receiver = try NotificationReceiver(failures: 1)
        let first = try StoreAPIFixture(ledger, notificationURLs: [receiver.url]) {
            $0.storeAPI?.notificationRetrySeconds = [2]
        }
        try first.record(StoreAPIFixture.purchase("alice", StoreAPITests.removeAds, "1000", day: 1))
        _ = try receiver.waitFor(1)
        first.service.server.stop()
        let ledgerPath = first.service.ledgerPath
        let restarted = try StoreAPIFixture(notificationURLs: [receiver.url]) {
            $0.ledgerPath = ledgerPath
            $0.storeAPI?.notificationRetrySeconds = [2]
        }
        let payloads = try receiver.waitFor(2)
        #expect(payloads[0] == payloads[1], "the retry after the restart is the same notification")
        Thread.sleep(forTimeInterval: 1.5)
        #expect(receiver.received.count == 2, "delivered once after the restart, then nothing more")
        restarted.service.server.stop()
    }
}
