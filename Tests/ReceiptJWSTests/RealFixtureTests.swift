import ReceiptCrypto
import ReceiptJWS
import ReceiptModel
import StrictJSON
import Testing

/// Signed data collected from public repositories (Vectors/SOURCES.md): Apple-signed transactions, renewal info and
/// notifications, the mock data of Apple's own server library, and Xcode's StoreKit testing output.
@Suite("Real JWS fixtures")
struct RealFixtureTests {
    enum Anchor: String, Sendable {
        case appleRootG3, appleLibraryTestCA, xcode

        func certificate() throws -> Certificate {
            switch self {
            case .appleRootG3: try Vectors.appleRootG3()
            case .appleLibraryTestCA: try Vectors.appleLibraryTestCA()
            case .xcode: try Vectors.xcodeStoreKitTesting()
            }
        }

        /// Another fixture's anchor, under which this one's JWS must not verify.
        var wrong: Anchor { self == .appleRootG3 ? .appleLibraryTestCA : .appleRootG3 }
    }

    struct Fixture: CustomTestStringConvertible, Sendable {
        let file: String
        let anchor: Anchor
        /// The payload's signing date in milliseconds (floor of Xcode's fractional values).
        let signedDate: Int64
        var testDescription: String { file }
    }

    static let fixtures: [Fixture] = [
        Fixture(file: "mingos-assa/sandbox-transaction.jws", anchor: .appleRootG3, signedDate: 1_739_161_772_561),
        Fixture(file: "go-iap/signed-renewal-info.jws", anchor: .appleRootG3, signedDate: 1_684_822_778_492),
        Fixture(
            file: "apple-assl/mock_signed_data/transactionInfo.jws", anchor: .appleLibraryTestCA,
            signedDate: 1_672_956_154_000),
        Fixture(
            file: "apple-assl/mock_signed_data/renewalInfo.jws", anchor: .appleLibraryTestCA,
            signedDate: 1_672_956_154_000),
        Fixture(
            file: "apple-assl/mock_signed_data/testNotification.jws", anchor: .appleLibraryTestCA,
            signedDate: 1_681_314_324_000),
        Fixture(file: "apple-assl/xcode/xcode-signed-transaction.jws", anchor: .xcode, signedDate: 1_697_679_936_056),
        Fixture(file: "apple-assl/xcode/xcode-signed-renewal-info.jws", anchor: .xcode, signedDate: 1_697_679_936_711),
        // An app transaction has no signedDate; its receiptCreationDate is its signing date.
        Fixture(
            file: "apple-assl/xcode/xcode-signed-app-transaction.jws", anchor: .xcode, signedDate: 1_697_680_122_257),
    ]

    @Test("each fixture verifies under its anchor at its signing date", arguments: fixtures)
    func verifiesAtSignedDate(_ fixture: Fixture) throws {
        let verified = try Vectors.verifier(fixture.anchor.certificate()).verify(Vectors.bytes(fixture.file))
        #expect(verified.validationTime.millisecondsSince1970 == fixture.signedDate)
        #expect(try verified.chain.last == fixture.anchor.certificate())
    }

    @Test("each fixture is untrusted under another fixture's anchor", arguments: fixtures)
    func untrustedUnderWrongAnchor(_ fixture: Fixture) throws {
        let verifier = try Vectors.verifier(fixture.anchor.wrong.certificate())
        let compact = try Vectors.bytes(fixture.file)
        #expect(try Vectors.code { try verifier.verify(compact) } == .untrustedChain)
    }

    @Test("Apple-signed fixtures have expired today: checked now, their leaf certificate is refused")
    func realFixturesExpired() throws {
        let verifier = try Vectors.verifier(Vectors.appleRootG3())
        let now = try Vectors.date("2026-11-29T00:00:00Z")
        for file in ["mingos-assa/sandbox-transaction.jws", "go-iap/signed-renewal-info.jws"] {
            let compact = try Vectors.bytes(file)
            #expect(try Vectors.code { try verifier.verify(compact, at: now) } == .certificateExpired)
        }
    }

    @Test("Xcode's StoreKit testing certificate is self-signed, valid for a year, and the only x5c entry")
    func xcodeChain() throws {
        let certificate = try Vectors.xcodeStoreKitTesting()
        #expect(certificate.isSelfSigned)
        #expect(certificate.subject == "O=StoreKit Testing in Xcode,CN=StoreKit Testing in Xcode")
        let verified = try Vectors.verifier(certificate).verify(
            Vectors.bytes("apple-assl/xcode/xcode-signed-transaction.jws"))
        #expect(verified.chain == [certificate])
        #expect(verified.keyID == "Apple_Xcode_Key")
        let afterExpiry = try Vectors.date("2024-10-19T00:00:00Z")
        let compact = try Vectors.bytes("apple-assl/xcode/xcode-signed-transaction.jws")
        #expect(
            try Vectors.code { try Vectors.verifier(certificate).verify(compact, at: afterExpiry) }
                == .certificateExpired)
    }

    @Test("Apple Root CA - G3 is recognised as an Apple root by its fingerprint")
    func appleRootRecognised() throws {
        let root = try Vectors.appleRootG3()
        #expect(AppleCertificates.isAppleRoot(root))
        #expect(try !AppleCertificates.isAppleRoot(Vectors.appleLibraryTestCA()))
    }

    @Test("a JWS whose x5c carries a copy of the anchor, as Apple's carry their root, is given the anchor itself")
    func anchorCopyTakenFromTheCache() throws {
        let root = try Vectors.appleRootG3()
        let verifier = try Vectors.verifier(root)
        let verified = try verifier.verify(Vectors.bytes("mingos-assa/sandbox-transaction.jws"))
        #expect(verified.chain.last == root)
        #expect(verifier.certificateCache.count == 3)
        #expect(try verifier.certificateCache.certificate(root.derEncoded) === root)
    }

    @Test("an Apple-signed chain carries Apple's markers, so it verifies with markers required")
    func realChainHasMarkers() throws {
        let verifier = try Vectors.verifier(Vectors.appleRootG3(), markerPolicy: .always)
        let verified = try verifier.verify(Vectors.bytes("mingos-assa/sandbox-transaction.jws"))
        #expect(verified.chain.count == 3)
    }

    @Test("a real sandbox transaction yields the fields its origin asserts")
    func realTransaction() throws {
        let verifier = try Vectors.verifier(Vectors.appleRootG3())
        let transaction = try verifier.verifyTransaction(
            Vectors.bytes("mingos-assa/sandbox-transaction.jws"),
            expecting: JWSExpectations(bundleID: "com.goodheartapp", environment: .sandbox))
        #expect(transaction.transactionID == "2000000847061981")
        #expect(transaction.originalTransactionID == "2000000847061981")
        #expect(transaction.bundleID == "com.goodheartapp")
        #expect(transaction.productID == "gh_super_good_ticket_1")
        #expect(transaction.purchaseDate?.millisecondsSince1970 == 1_738_645_560_000)
        #expect(transaction.originalPurchaseDate?.millisecondsSince1970 == 1_738_645_560_000)
        #expect(transaction.quantity == 1)
        #expect(transaction.type == "Consumable")
        #expect(transaction.inAppOwnershipType == "PURCHASED")
        #expect(transaction.signedDate?.millisecondsSince1970 == 1_739_161_772_561)
        #expect(transaction.environment == "Sandbox")
        #expect(transaction.transactionReason == "PURCHASE")
        #expect(transaction.storefront == "JPN")
        #expect(transaction.storefrontID == "143462")
        #expect(transaction.price == 230_000)
        #expect(transaction.currency == "JPY")
        #expect(transaction.unknownFields.members.isEmpty)
    }

    @Test("a real sandbox renewal info yields the fields its origin asserts")
    func realRenewalInfo() throws {
        let verifier = try Vectors.verifier(Vectors.appleRootG3())
        let renewal = try verifier.verifyRenewalInfo(
            Vectors.bytes("go-iap/signed-renewal-info.jws"), expecting: JWSExpectations(environment: .sandbox))
        #expect(renewal.originalTransactionID == "2000000335310644")
        #expect(renewal.autoRenewProductID == "co.ringalarm.swtich.quarterly2")
        #expect(renewal.productID == "co.ringalarm.swtich.quarterly2")
        #expect(renewal.autoRenewStatus == 1)
        #expect(renewal.signedDate?.millisecondsSince1970 == 1_684_822_778_492)
        #expect(renewal.environment == "Sandbox")
        #expect(renewal.recentSubscriptionStartDate?.millisecondsSince1970 == 1_684_822_738_000)
    }

    @Test("Xcode's signed transaction yields the fields Apple's library asserts (fractional dates floored)")
    func xcodeTransaction() throws {
        let verifier = try Vectors.verifier(Vectors.xcodeStoreKitTesting())
        let transaction = try verifier.verifyTransaction(
            Vectors.bytes("apple-assl/xcode/xcode-signed-transaction.jws"),
            expecting: JWSExpectations(bundleID: "com.example.naturelab.backyardbirds.example", environment: .xcode))
        #expect(transaction.originalTransactionID == "0")
        #expect(transaction.transactionID == "0")
        #expect(transaction.webOrderLineItemID == "0")
        #expect(transaction.productID == "pass.premium")
        #expect(transaction.subscriptionGroupIdentifier == "6F3A93AB")
        #expect(transaction.purchaseDate?.millisecondsSince1970 == 1_697_679_936_049)
        #expect(transaction.originalPurchaseDate?.millisecondsSince1970 == 1_697_679_936_049)
        #expect(transaction.expiresDate?.millisecondsSince1970 == 1_700_358_336_049)
        #expect(transaction.quantity == 1)
        #expect(transaction.type == "Auto-Renewable Subscription")
        #expect(transaction.appAccountToken == nil)
        #expect(transaction.inAppOwnershipType == "PURCHASED")
        #expect(transaction.signedDate?.millisecondsSince1970 == 1_697_679_936_056)
        #expect(transaction.revocationReason == nil)
        #expect(transaction.revocationDate == nil)
        #expect(transaction.isUpgraded == false)
        #expect(transaction.offerType == 1)
        #expect(transaction.offerIdentifier == nil)
        #expect(transaction.environment == "Xcode")
        #expect(transaction.storefront == "USA")
        #expect(transaction.storefrontID == "143441")
        #expect(transaction.transactionReason == "PURCHASE")
        // Xcode adds device verification fields that the transaction type does not document: kept, not dropped.
        #expect(transaction.unknownFields.keys == ["deviceVerification", "deviceVerificationNonce"])
        #expect(transaction.json["purchaseDate"] == .number("1697679936049.7297"))
    }

    @Test("Xcode's signed renewal info yields the fields Apple's library asserts")
    func xcodeRenewalInfo() throws {
        let verifier = try Vectors.verifier(Vectors.xcodeStoreKitTesting())
        let renewal = try verifier.verifyRenewalInfo(Vectors.bytes("apple-assl/xcode/xcode-signed-renewal-info.jws"))
        #expect(renewal.expirationIntent == nil)
        #expect(renewal.originalTransactionID == "0")
        #expect(renewal.autoRenewProductID == "pass.premium")
        #expect(renewal.productID == "pass.premium")
        #expect(renewal.autoRenewStatus == 1)
        #expect(renewal.isInBillingRetryPeriod == nil)
        #expect(renewal.priceIncreaseStatus == nil)
        #expect(renewal.gracePeriodExpiresDate == nil)
        #expect(renewal.offerType == nil)
        #expect(renewal.offerIdentifier == nil)
        #expect(renewal.signedDate?.millisecondsSince1970 == 1_697_679_936_711)
        #expect(renewal.environment == "Xcode")
        #expect(renewal.recentSubscriptionStartDate?.millisecondsSince1970 == 1_697_679_936_049)
        #expect(renewal.renewalDate?.millisecondsSince1970 == 1_700_358_336_049)
    }

    @Test("Xcode's signed app transaction yields the fields Apple's library asserts")
    func xcodeAppTransaction() throws {
        let verifier = try Vectors.verifier(Vectors.xcodeStoreKitTesting())
        let app = try verifier.verifyAppTransaction(
            Vectors.bytes("apple-assl/xcode/xcode-signed-app-transaction.jws"),
            expecting: JWSExpectations(
                bundleID: "com.example.naturelab.backyardbirds.example", environment: .xcode, appAppleID: 1234))
        #expect(app.appAppleID == nil)
        #expect(app.bundleID == "com.example.naturelab.backyardbirds.example")
        #expect(app.applicationVersion == "1")
        #expect(app.versionExternalIdentifier == nil)
        #expect(app.originalPurchaseDate?.millisecondsSince1970 == -62_135_769_600_000)
        #expect(app.originalApplicationVersion == "1")
        #expect(app.deviceVerification == "cYUsXc53EbYc0pOeXG5d6/31LGHeVGf84sqSN0OrJi5u/j2H89WWKgS8N0hMsMlf")
        #expect(app.deviceVerificationNonce == "48c8b92d-ce0d-4229-bedf-e61b4f9cfc92")
        #expect(app.preorderDate == nil)
        #expect(app.receiptType == "Xcode")
        #expect(app.receiptCreationDate?.millisecondsSince1970 == 1_697_680_122_257)
        #expect(app.unknownFields.keys == ["requestDate"])
    }

    @Test("the mock transaction of Apple's library: Sandbox and com.example pass, com.example.x does not")
    func mockTransaction() throws {
        let verifier = try Vectors.verifier(Vectors.appleLibraryTestCA())
        let compact = try Vectors.bytes("apple-assl/mock_signed_data/transactionInfo.jws")
        let transaction = try verifier.verifyTransaction(
            compact, expecting: JWSExpectations(bundleID: "com.example", environment: .sandbox))
        #expect(transaction.environment == "Sandbox")
        #expect(transaction.signedDate?.millisecondsSince1970 == 1_672_956_154_000)
        let wrong = JWSExpectations(bundleID: "com.example.x")
        #expect(
            try Vectors.code { try verifier.verifyTransaction(compact, expecting: wrong) }
                == .wrongBundleID)
        let production = JWSExpectations(environment: .production)
        #expect(
            try Vectors.code { try verifier.verifyTransaction(compact, expecting: production) }
                == .wrongEnvironment)
    }

    @Test("the mock renewal info of Apple's library is Sandbox")
    func mockRenewalInfo() throws {
        let verifier = try Vectors.verifier(Vectors.appleLibraryTestCA())
        let renewal = try verifier.verifyRenewalInfo(
            Vectors.bytes("apple-assl/mock_signed_data/renewalInfo.jws"),
            expecting: JWSExpectations(environment: .sandbox))
        #expect(renewal.environment == "Sandbox")
        #expect(renewal.signedDate?.millisecondsSince1970 == 1_672_956_154_000)
    }

    @Test("the mock chains of Apple's library carry its marker extensions")
    func mockChainsHaveMarkers() throws {
        let verifier = try Vectors.verifier(Vectors.appleLibraryTestCA(), markerPolicy: .always)
        for file in ["transactionInfo", "renewalInfo", "testNotification"] {
            let verified = try verifier.verify(Vectors.bytes("apple-assl/mock_signed_data/\(file).jws"))
            #expect(verified.chain.count == 3)
        }
    }

    @Test("a JWS without signedDate needs a validation time from the caller")
    func missingSignedDate() throws {
        let verifier = try Vectors.verifier(Vectors.appleLibraryTestCA())
        let compact = try Vectors.bytes("apple-assl/mock_signed_data/wrongBundleId.jws")
        #expect(try Vectors.code { try verifier.verify(compact) } == .missingSignedDate)
        let time = try Vectors.date("2023-04-12T15:45:24Z")
        let verified = try verifier.verify(compact, at: time)
        #expect(verified.validationTime == time)
    }

    @Test("a notification for another bundle is refused when the caller names the bundle")
    func wrongBundleNotification() throws {
        let verifier = try Vectors.verifier(Vectors.appleLibraryTestCA())
        let compact = try Vectors.bytes("apple-assl/mock_signed_data/wrongBundleId.jws")
        let time = try Vectors.date("2023-04-12T15:45:24Z")
        let error = try Vectors.error {
            try verifier.verifyNotification(
                signedPayload: compact, expecting: JWSExpectations(bundleID: "com.example"), at: time)
        }
        #expect(error?.code == .wrongBundleID)
        #expect(error?.message.contains("payload.data.bundleId is \"com.example.wrong\"") == true)
    }

    @Test("a JWS whose header names its chain x5cwrong has no certificate chain")
    func missingX5C() throws {
        let verifier = try Vectors.verifier(Vectors.appleLibraryTestCA())
        let compact = try Vectors.bytes("apple-assl/mock_signed_data/missingX5CHeaderClaim.jws")
        let error = try Vectors.error { try verifier.verify(compact) }
        #expect(error?.code == .missingCertificateChain)
        #expect(error?.message == "header.x5c is absent")
    }
}
