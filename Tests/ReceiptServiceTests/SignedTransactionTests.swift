import Foundation
import ReceiptJWS
import ReceiptModel
import ReceiptService
import StrictJSON
import Testing

/// `POST /v1/transactions` with `{"customer_id", "signed_transaction"}`: a StoreKit 2 `jwsRepresentation`
/// verified against `apple_notifications` and recorded for the posted customer, on both ledger stores.
@Suite("POST /v1/transactions with a StoreKit 2 signed_transaction")
struct SignedTransactionTests {
    typealias Fixture = AppleNotificationFixture
    static let token = "5b1e1c4e-9d9a-4f0b-a0de-2f1b3c4d5e6f"

    static func request(customer: String = "player-1", _ signedTransaction: String) -> String {
        #"{"customer_id":"\#(customer)","signed_transaction":"\#(signedTransaction)"}"#
    }

    @Test(
        "a signed transaction is recorded for the customer (201); the same again answers 200 with the stored record",
        arguments: LedgerKind.allCases)
    func recordedOnce(ledger: LedgerKind) throws {
        let fixture = try Fixture(ledger)
        let body = Self.request(try Fixture.signedTransaction(Fixture.period(0)))
        let created = try fixture.service.post("/v1/transactions", json: body)
        #expect(created.status == 201)
        let record = try created.json()["transaction"]
        #expect(record?["customer_id"] == .string("player-1"))
        #expect(record?["bundle_id"] == .string(Fixture.bundleID))
        #expect(record?["transaction_id"] == .string("7000"))
        #expect(record?["expires_date_ms"] == .string(String(Fixture.day(30).millisecondsSince1970)))
        let replayed = try fixture.service.post("/v1/transactions", json: body)
        #expect(replayed.status == 200)
        #expect(try replayed.json()["transaction"] == record)
        #expect(try fixture.ledgerTransactions() == .integer(1))
        #expect(try fixture.state("player-1", at: Fixture.day(10)) == "active")
    }

    @Test(
        "the transaction's appAccountToken is ignored: it is recorded for the posted customer_id",
        arguments: LedgerKind.allCases)
    func appAccountTokenIgnored(ledger: LedgerKind) throws {
        let fixture = try Fixture(ledger)
        let jws = try Fixture.signedTransaction(Fixture.period(0, token: Self.token))
        let reply = try fixture.service.post("/v1/transactions", json: Self.request(jws))
        #expect(reply.status == 201)
        #expect(try reply.json()["transaction"]?["customer_id"] == .string("player-1"))
        #expect(try fixture.state("player-1", at: Fixture.day(10)) == "active")
        #expect(try fixture.state(Self.token, at: Fixture.day(10)) == nil)
    }

    @Test(
        "a revoked signed transaction is recorded with its cancellation in the same request: revoked from then on",
        arguments: LedgerKind.allCases)
    func revokedRecordedWithCancellation(ledger: LedgerKind) throws {
        let fixture = try Fixture(ledger)
        var revoked = Fixture.period(0)
        revoked.revoked = Fixture.day(5)
        let reply = try fixture.service.post(
            "/v1/transactions", json: Self.request(try Fixture.signedTransaction(revoked, signed: Fixture.day(5))))
        #expect(reply.status == 201)
        #expect(
            try reply.json()["transaction"]?["cancellation_date_ms"]
                == .string(String(Fixture.day(5).millisecondsSince1970)))
        #expect(try fixture.state("player-1", at: Fixture.day(10)) == "revoked")
        #expect(try fixture.state("player-1", at: Fixture.day(4)) == "active")
        #expect(try fixture.ledgerTransactions() == .integer(1))
    }

    @Test(
        "a signed transaction whose expiry Apple extended moves the recorded expiry (201); an older one changes nothing",
        arguments: LedgerKind.allCases)
    func extendedExpiryMoves(ledger: LedgerKind) throws {
        let fixture = try Fixture(ledger)
        var subscription = Fixture.period(0)
        let original = Self.request(try Fixture.signedTransaction(subscription))
        #expect(try fixture.service.post("/v1/transactions", json: original).status == 201)
        subscription.purchase.expiresDate = Fixture.day(37)
        let extended = try fixture.service.post(
            "/v1/transactions", json: Self.request(try Fixture.signedTransaction(subscription, signed: Fixture.day(20)))
        )
        #expect(extended.status == 201)
        let expiry = JSONValue.string(String(Fixture.day(37).millisecondsSince1970))
        #expect(try extended.json()["transaction"]?["expires_date_ms"] == expiry)
        let older = try fixture.service.post("/v1/transactions", json: original)
        #expect(older.status == 200)
        #expect(try older.json()["transaction"]?["expires_date_ms"] == expiry)
        #expect(try fixture.state("player-1", at: Fixture.day(33)) == "active")
    }

    /// A request the endpoint refuses, with the status and code it answers.
    enum Refusal: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case tamperedSignature = "tampered signature"
        case wrongBundleID = "another app's bundle id"
        case sandbox = "a Sandbox transaction"
        case notJWS = "not a JWS"
        case unknownKey = "an unknown key"
        case noCustomer = "no customer_id"
        case notConfigured = "no apple_notifications"
        case noToken = "no bearer token"

        var testDescription: String { rawValue }

        var status: Int {
            switch self {
            case .tamperedSignature, .wrongBundleID, .sandbox: 403
            case .notJWS, .unknownKey, .noCustomer: 400
            case .notConfigured: 501
            case .noToken: 401
            }
        }

        var code: String {
            switch self {
            case .tamperedSignature: "invalid_signature"
            case .wrongBundleID: "wrong_bundle_id"
            case .sandbox: "wrong_environment"
            case .notJWS: "malformed"
            case .unknownKey, .noCustomer: "invalid_request"
            case .notConfigured: "notifications_not_configured"
            case .noToken: "unauthorized"
            }
        }
    }

    @Test("a refused signed transaction stores nothing", arguments: LedgerKind.allCases, Refusal.allCases)
    func refused(ledger: LedgerKind, refusal: Refusal) throws {
        let fixture = try Fixture(ledger) { configuration in
            if refusal == .notConfigured { configuration.appleNotifications = nil }
        }
        let purchase = Fixture.period(0)
        let signer = try Fixture.signer()
        let jws = try Fixture.signedTransaction(purchase)
        let body: String
        var token: String? = ServiceFixture.token
        switch refusal {
        case .tamperedSignature:
            let signature = try #require(jws.range(of: ".", options: .backwards)).upperBound
            let flipped = jws[signature] == "A" ? "B" : "A"
            body = Self.request(jws.replacingCharacters(in: signature..<jws.index(after: signature), with: flipped))
        case .wrongBundleID:
            body = Self.request(
                try signer.sign(
                    payload: Fixture.transactionPayload(purchase, signed: Fixture.day(1), bundleID: "com.other.app")))
        case .sandbox:
            body = Self.request(
                try signer.sign(
                    payload: Fixture.transactionPayload(purchase, signed: Fixture.day(1), environment: .sandbox)))
        case .notJWS: body = Self.request("not-a-jws")
        case .unknownKey:
            body = #"{"customer_id":"player-1","signed_transaction":"\#(jws)","bundle_id":"com.example.game"}"#
        case .noCustomer: body = #"{"signed_transaction":"\#(jws)"}"#
        case .notConfigured: body = Self.request(jws)
        case .noToken:
            body = Self.request(jws)
            token = nil
        }
        let reply = try fixture.service.post("/v1/transactions", json: body, token: token)
        #expect(reply.status == refusal.status, "\(reply.text)")
        #expect(reply.errorCode == refusal.code, "\(reply.text)")
        #expect(try fixture.ledgerTransactions() == .integer(0))
        #expect(try fixture.state("player-1", at: Fixture.day(10)) == nil)
    }
}
