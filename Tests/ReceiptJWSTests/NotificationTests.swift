import ReceiptCrypto
import ReceiptDER
import ReceiptJWS
import ReceiptModel
import ReceiptSigner
import StrictJSON
import Testing

@Suite("App Store Server Notifications V2")
struct NotificationTests {
    /// A `{"signedPayload": …}` body around a notification, signed with `chain`, nesting `transaction` and `renewal`.
    static func body(
        chain: DevelopmentChain,
        transaction: String?,
        renewal: String?,
        signedDate: ReceiptDate = Fresh.signedDate,
        environment: String = "Sandbox"
    ) throws -> [UInt8] {
        var data = JSONObject()
        data["appAppleId"] = .integer(1234)
        data["bundleId"] = .string("com.example.game")
        data["bundleVersion"] = .string("42")
        data["environment"] = .string(environment)
        if let transaction { data["signedTransactionInfo"] = .string(transaction) }
        if let renewal { data["signedRenewalInfo"] = .string(renewal) }
        data["status"] = .integer(1)
        var payload = JSONObject()
        payload["notificationType"] = .string("DID_RENEW")
        payload["subtype"] = .string("BILLING_RECOVERY")
        payload["notificationUUID"] = .string("002e14d5-51f5-4503-b5a8-c3a1af68eb20")
        payload["data"] = .object(data)
        payload["version"] = .string("2.0")
        payload["signedDate"] = .integer(signedDate.millisecondsSince1970)
        payload["futureField"] = .array([.bool(true)])
        let signed = try Fresh.signer(chain).sign(payload: payload)
        return Array(JSONValue.object(JSONObject(["signedPayload": .string(signed)])).serialized().utf8)
    }

    static func renewal(_ chain: DevelopmentChain, signedDate: ReceiptDate = Fresh.signedDate) throws -> String {
        try Fresh.signer(chain).sign(
            payload: SignedRenewalInfo.payload(for: Fresh.subscription, environment: .sandbox, signedDate: signedDate))
    }

    @Test("a notification verifies with its nested transaction and renewal info")
    func nested() throws {
        let chain = try Fresh.chain.get()
        let body = try Self.body(chain: chain, transaction: Fresh.transaction(), renewal: Self.renewal(chain))
        let notification = try Vectors.verifier(chain.root).verifyNotification(
            body, expecting: JWSExpectations(bundleID: "com.example.game", environment: .sandbox, appAppleID: 1234))
        #expect(notification.notificationType == "DID_RENEW")
        #expect(notification.subtype == "BILLING_RECOVERY")
        #expect(notification.version == "2.0")
        #expect(notification.signedDate == Fresh.signedDate)
        #expect(notification.data?.status == 1)
        #expect(notification.data?.bundleVersion == "42")
        #expect(notification.transaction?.transactionID == Fresh.subscription.transactionID)
        #expect(notification.transaction?.expiresDate == Fresh.subscription.expiresDate)
        #expect(notification.renewalInfo?.autoRenewProductID == Fresh.subscription.productID)
        #expect(notification.signedTransactionInfo?.chain.last == chain.root)
        #expect(notification.unknownFields.keys == ["futureField"])
    }

    @Test("a tampered nested transaction is refused, and the error says where it was nested")
    func tamperedNested() throws {
        let chain = try Fresh.chain.get()
        var parts = Vectors.parts(try Fresh.transaction())
        parts[1] = Base64URL.encode(Array(#"{"signedDate":1717588800123,"quantity":99}"#.utf8))
        let body = try Self.body(chain: chain, transaction: parts.joined(separator: "."), renewal: nil)
        let error = try Vectors.error { try Vectors.verifier(chain.root).verifyNotification(body) }
        #expect(error?.code == .invalidSignature)
        #expect(error?.message.hasPrefix("payload.data.signedTransactionInfo: ") == true)
    }

    @Test("a nested JWS from another chain is untrusted")
    func nestedFromAnotherChain() throws {
        let chain = try Fresh.chain.get()
        let other = try Fresh.appleLikeChain.get()
        let body = try Self.body(chain: chain, transaction: nil, renewal: Self.renewal(other))
        #expect(
            try Vectors.code { try Vectors.verifier(chain.root).verifyNotification(body) }
                == .untrustedChain)
    }

    @Test("a nested JWS is checked at its own signedDate, not the notification's")
    func nestedAtOwnDate() throws {
        let chain = try DevelopmentChain.create(algorithm: .ecP256, notBefore: 1_600_000_000, notAfter: 1_800_000_000)
        let late = ReceiptDate(secondsSince1970: 1_900_000_000)
        let renewal = try Fresh.signer(chain).sign(
            payload: SignedRenewalInfo.payload(for: Fresh.subscription, environment: .sandbox, signedDate: late))
        let body = try Self.body(chain: chain, transaction: nil, renewal: renewal)
        let verifier = try Vectors.verifier(chain.root)
        #expect(try Vectors.code { try verifier.verifyNotification(body) } == .certificateExpired)
        // A time given by the caller applies to every JWS.
        let notification = try verifier.verifyNotification(body, at: Fresh.signedDate)
        #expect(notification.renewalInfo?.signedDate == late)
    }

    @Test("the caller's expectations apply to the nested transaction too")
    func nestedExpectations() throws {
        let chain = try Fresh.chain.get()
        let production = try Fresh.transaction(environment: .production)
        let body = try Self.body(chain: chain, transaction: production, renewal: nil)
        let error = try Vectors.error {
            try Vectors.verifier(chain.root).verifyNotification(body, expecting: JWSExpectations(environment: .sandbox))
        }
        #expect(error?.code == .wrongEnvironment)
        #expect(error?.message.hasPrefix("payload.data.signedTransactionInfo.environment") == true)
    }

    @Test("Apple's mock TEST notification: Sandbox, com.example and app 1234 pass")
    func mockNotification() throws {
        let verifier = try Vectors.verifier(Vectors.appleLibraryTestCA())
        let notification = try verifier.verifyNotification(
            signedPayload: Vectors.bytes("apple-assl/mock_signed_data/testNotification.jws"),
            expecting: JWSExpectations(bundleID: "com.example", environment: .sandbox, appAppleID: 1234))
        #expect(notification.notificationType == "TEST")
        #expect(notification.notificationUUID == "9ad56bd2-0bc6-42e0-af24-fd996d87a1e6")
        #expect(notification.data?.appAppleID == 1234)
        #expect(notification.signedDate?.millisecondsSince1970 == 1_681_314_324_000)
        #expect(notification.transaction == nil)
    }

    @Test("Apple's mock TEST notification fails each expectation it does not meet with its own code")
    func mockNotificationMismatches() throws {
        let verifier = try Vectors.verifier(Vectors.appleLibraryTestCA())
        let compact = try Vectors.bytes("apple-assl/mock_signed_data/testNotification.jws")
        let cases: [(JWSExpectations, JWSError.Code)] = [
            (JWSExpectations(environment: .production), .wrongEnvironment),
            (JWSExpectations(appAppleID: 1235), .wrongAppAppleID),
            (JWSExpectations(bundleID: "com.example.x"), .wrongBundleID),
        ]
        for (expectations, code) in cases {
            #expect(
                try Vectors.code {
                    try verifier.verifyNotification(signedPayload: compact, expecting: expectations)
                } == code)
        }
    }

    @Test("a real Apple TEST notification body verifies under Apple Root CA - G3 at its signedDate")
    func realNotification() throws {
        let verifier = try Vectors.verifier(Vectors.appleRootG3(), markerPolicy: .always)
        let notification = try verifier.verifyNotification(
            Vectors.bytes("aporat/test-notification-signed-payload.json"),
            // Sandbox notifications carry no appAppleId, so an expected one is not required of them.
            expecting: JWSExpectations(bundleID: "com.Abilities", environment: .sandbox, appAppleID: 1))
        #expect(notification.notificationType == "TEST")
        #expect(notification.notificationUUID == "5e09dcfc-205e-4ea1-9883-96676f394992")
        #expect(notification.version == "2.0")
        #expect(notification.signedDate?.millisecondsSince1970 == 1_662_122_492_884)
        #expect(notification.data?.bundleID == "com.Abilities")
        #expect(notification.data?.signedTransactionInfo == nil)
    }

    @Test("bodies that are not an object with a signedPayload string are malformed")
    func malformedBodies() throws {
        let verifier = try Vectors.verifier(Vectors.appleLibraryTestCA())
        for body in ["", "[]", "{}", #"{"signedPayload":1}"#, #"{"signedPayload":"a.b.c","signedPayload":"d"}"#] {
            #expect(
                try Vectors.code { try verifier.verifyNotification(Array(body.utf8)) } == .malformed,
                "\(body)")
        }
    }

    @Test("a nested field of the wrong type is an invalid payload naming the field")
    func wrongNestedType() throws {
        let chain = try Fresh.chain.get()
        let payload = JSONObject([
            "notificationType": .string("TEST"), "signedDate": .integer(Fresh.signedDate.millisecondsSince1970),
            "data": .object(JSONObject(["bundleId": .integer(5)])),
        ])
        let signed = try Fresh.signer(chain).sign(payload: payload)
        let error = try Vectors.error {
            try Vectors.verifier(chain.root).verifyNotification(signedPayload: Array(signed.utf8))
        }
        #expect(error?.code == .invalidPayload)
        #expect(error?.message == "payload.data.bundleId: must be a string, found a number")
    }
}
