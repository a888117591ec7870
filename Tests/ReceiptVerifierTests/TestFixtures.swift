import ReceiptCMS
import ReceiptCrypto
import ReceiptDER
import ReceiptModel
import ReceiptSigner
import ReceiptVerifier

/// Chains and receipts made for the tests with the real signer (keys are generated once per test process).
enum TestFixtures {
    static let rsaChain = Result { try DevelopmentChain.create(algorithm: .rsa2048) }
    static let ecChain = Result { try DevelopmentChain.create(algorithm: .ecP256) }
    static let otherChain = Result { try DevelopmentChain.create(algorithm: .ecP256) }

    static func chain(_ algorithm: GeneratedKeyAlgorithm) throws -> DevelopmentChain {
        try (algorithm == .rsa2048 ? rsaChain : ecChain).get()
    }

    static func date(_ text: String) -> ReceiptDate {
        ReceiptDate(rfc3339: text) ?? ReceiptDate(millisecondsSince1970: 0)
    }

    /// A production-like receipt with three purchases: a lifetime unlock, a subscription renewal, consumables.
    static func receipt() -> Receipt {
        Receipt(
            bundleID: "com.example.game",
            creationDate: date("2024-06-05T12:00:00Z"),
            receiptType: "Production",
            appItemID: 1_234_567_890,
            applicationVersion: "42",
            originalApplicationVersion: "1.0",
            originalPurchaseDate: date("2023-01-01T08:00:00Z"),
            versionExternalIdentifier: 8_123_456,
            inAppPurchases: [
                InAppPurchase(
                    productID: "com.example.removeads", transactionID: "1000000000000001",
                    purchaseDate: date("2023-02-01T10:00:00Z"), originalTransactionID: "1000000000000001",
                    originalPurchaseDate: date("2023-02-01T10:00:00Z"), productType: 1),
                InAppPurchase(
                    productID: "com.example.pro.monthly", transactionID: "1000000000000002",
                    purchaseDate: date("2024-06-01T09:00:00Z"), originalTransactionID: "1000000000000000",
                    originalPurchaseDate: date("2024-05-01T09:00:00Z"), productType: 3,
                    expiresDate: date("2024-07-01T09:00:00Z"), webOrderLineItemID: 9_000_000_000_000_001,
                    isTrialPeriod: false, isInIntroOfferPeriod: false, promotionalOfferID: "summer"),
                InAppPurchase(
                    productID: "com.example.coins100", transactionID: "1000000000000003",
                    purchaseDate: date("2024-06-04T18:30:00.250Z"), quantity: 3,
                    cancellationDate: date("2024-06-05T08:00:00Z")),
            ])
    }

    static func signed(_ receipt: Receipt = receipt(), with algorithm: GeneratedKeyAlgorithm = .rsa2048) throws
        -> [UInt8]
    {
        try ReceiptSigner(credentials: chain(algorithm).credentials).sign(receipt)
    }

    static func verifier(
        _ algorithm: GeneratedKeyAlgorithm = .rsa2048, policy: ReceiptVerifier.MarkerPolicy = .underAppleRoots
    ) throws -> ReceiptVerifier {
        try ReceiptVerifier(trustAnchors: [chain(algorithm).root], markerPolicy: policy)
    }

    /// The verification error `body` throws, or nil when it succeeds.
    static func failure(_ body: () throws(ReceiptVerificationError) -> Void) -> ReceiptVerificationError? {
        do {
            try body()
            return nil
        } catch {
            return error
        }
    }

    /// The error code verifying `input` with `verifier` ends in, or nil when the receipt is valid.
    static func code(
        _ input: [UInt8],
        _ verifier: ReceiptVerifier,
        options: VerificationOptions = VerificationOptions()
    ) -> ReceiptVerificationError.Code? {
        failure { () throws(ReceiptVerificationError) in _ = try verifier.verify(input, options: options) }?.code
    }
}

/// Builds CMS SignedData envelopes by hand, signed for real, so that each rule of the verifier can be broken one at
/// a time while everything else stays valid.
struct EnvelopeBuilder {
    var payload: [UInt8]?
    var contentType: ASN1ObjectIdentifier = .cmsData
    var digest: DigestAlgorithm = .sha256
    var digestAlgorithm: ASN1ObjectIdentifier = .sha256
    /// SignedData.digestAlgorithms; nil for just the signer's.
    var announcedDigestAlgorithms: [ASN1ObjectIdentifier]?
    var signatureAlgorithm: ASN1ObjectIdentifier?
    var signerCount = 1
    var identifyBySubjectKeyIdentifier = false
    /// Signed attributes to include (whole encoded Attribute SEQUENCEs); nil for Apple's layout without them.
    var signedAttributes: [[UInt8]]?
    var certificates: [Certificate]
    var key: PrivateKey
    var signerCertificate: Certificate
    var trailing: [UInt8] = []

    init(payload: [UInt8]?, chain: DevelopmentChain) {
        self.payload = payload
        self.key = chain.signerKey
        self.signerCertificate = chain.signer
        self.certificates = [chain.signer, chain.intermediate]
    }

    /// A signed attribute `SEQUENCE { type, SET { value } }`.
    static func attribute(_ type: ASN1ObjectIdentifier, _ encodedValue: [UInt8]) -> [UInt8] {
        var writer = DERWriter()
        writer.appendSequence { sequence in
            sequence.appendObjectIdentifier(type)
            sequence.append(.set, content: encodedValue)
        }
        return writer.bytes
    }

    /// The content-type and message-digest attributes that correctly describe `payload`.
    func correctSignedAttributes() -> [[UInt8]] {
        var type = DERWriter()
        type.appendObjectIdentifier(contentType)
        var digestValue = DERWriter()
        digestValue.appendOctetString(digest.hash(payload ?? []))
        return [
            Self.attribute(.cmsContentTypeAttribute, type.bytes),
            Self.attribute(.cmsMessageDigestAttribute, digestValue.bytes),
        ]
    }

    func build() throws -> [UInt8] {
        let signedBytes: [UInt8]
        if let signedAttributes {
            var set = DERWriter()
            set.appendSetOf(signedAttributes)
            signedBytes = set.bytes
        } else {
            signedBytes = payload ?? []
        }
        let signature = try key.signature(for: signedBytes, digest: digest)
        let fields = try signerCertificate.issuerAndSerialNumber()
        let isRSA = if case .rsa = key.algorithm { true } else { false }
        let signatureOID = signatureAlgorithm ?? (isRSA ? .rsaEncryption : .ecdsaWithSHA256)
        var writer = DERWriter()
        writer.appendSequence { contentInfo in
            contentInfo.appendObjectIdentifier(.cmsSignedData)
            contentInfo.appendConstructed(.contextSpecific(0, constructed: true)) { explicit in
                explicit.appendSequence { signedData in
                    signedData.appendInteger(1)
                    signedData.appendConstructed(.set) { set in
                        for algorithm in announcedDigestAlgorithms ?? [digestAlgorithm] {
                            set.appendSequence { $0.appendObjectIdentifier(algorithm) }
                        }
                    }
                    signedData.appendSequence { encapsulated in
                        encapsulated.appendObjectIdentifier(contentType)
                        if let payload {
                            encapsulated.appendConstructed(.contextSpecific(0, constructed: true)) {
                                $0.appendOctetString(payload)
                            }
                        }
                    }
                    signedData.append(
                        .contextSpecific(0, constructed: true), content: certificates.map(\.derEncoded).joined())
                    signedData.appendConstructed(.set) { signerInfos in
                        for _ in 0..<signerCount {
                            signerInfos.appendSequence { signer in
                                signer.appendInteger(identifyBySubjectKeyIdentifier ? 3 : 1)
                                if identifyBySubjectKeyIdentifier {
                                    signer.append(
                                        .contextSpecific(0, constructed: false),
                                        content: signerCertificate.subjectKeyIdentifier ?? [])
                                } else {
                                    signer.appendSequence {
                                        $0.appendEncoded(fields.issuer)
                                        $0.appendInteger(twosComplement: fields.serialNumber)
                                    }
                                }
                                signer.appendSequence { $0.appendObjectIdentifier(digestAlgorithm) }
                                if let signedAttributes {
                                    signer.append(
                                        .contextSpecific(0, constructed: true), content: signedAttributes.joined())
                                }
                                signer.appendSequence { $0.appendObjectIdentifier(signatureOID) }
                                signer.appendOctetString(signature)
                            }
                        }
                    }
                }
            }
        }
        return writer.bytes + trailing
    }
}

/// Hand-built receipt payloads, including ones no correct signer would produce.
enum PayloadBuilder {
    static func attribute(_ type: Int64, _ value: [UInt8], version: Int64 = 1) -> [UInt8] {
        var writer = DERWriter()
        writer.appendSequence {
            $0.appendInteger(type)
            $0.appendInteger(version)
            $0.appendOctetString(value)
        }
        return writer.bytes
    }

    static func utf8(_ text: String) -> [UInt8] {
        var writer = DERWriter()
        writer.appendUTF8String(text)
        return writer.bytes
    }

    static func ia5(_ text: String) -> [UInt8] {
        var writer = DERWriter()
        writer.appendIA5String(text)
        return writer.bytes
    }

    static func set(_ attributes: [[UInt8]]) -> [UInt8] {
        var writer = DERWriter()
        writer.append(.set, content: attributes.joined())
        return writer.bytes
    }

    /// The smallest valid payload: bundle id and creation date.
    static func minimal(extra: [[UInt8]] = []) -> [[UInt8]] {
        [attribute(2, utf8("com.example.game")), attribute(12, ia5("2024-06-05T12:00:00Z"))] + extra
    }
}
