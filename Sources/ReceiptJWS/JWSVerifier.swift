import ReceiptCrypto
import ReceiptDER
import ReceiptModel
import StrictJSON

/// Verifies App Store signed data: StoreKit 2 transactions, renewal info and app transactions, and App Store
/// Server Notifications V2, all JWS compact serializations signed with ES256 by the leaf of an `x5c` chain.
///
/// A JWS is accepted only when: it is three non-empty parts of strict unpadded base64url; its header is a JSON
/// object holding only `alg` (which must be `ES256`), `x5c` (1 to 4 standard-base64 DER certificates, leaf first),
/// and optionally `kid` and `typ` (`JWT`); the leaf key is EC P-256; the signature is 64 bytes `r ‖ s` and
/// verifies over the ASCII `header.payload` exactly as received; the payload is a JSON object; and the leaf chains
/// through the other `x5c` certificates to one of the pinned anchors (never to a certificate the JWS brings along)
/// at the payload's `signedDate` or a time the caller gives, every issuer being a CA. When the chain ends at one of
/// Apple's roots (or always, by choice) the leaf and the intermediate must carry Apple's marker extensions.
public struct JWSVerifier: Sendable {
    /// Larger than any signed transaction or notification (Apple's are a few KiB).
    public static let defaultMaximumSize = 1 << 20
    /// Leaf, intermediate and root, with one to spare.
    public static let maximumChainLength = 4
    /// The header parameters a JWS may carry; any other is refused.
    public static let headerParameters: Set<String> = ["alg", "x5c", "kid", "typ"]

    /// When to require Apple's marker extensions on the leaf and the intermediate.
    public enum MarkerPolicy: Hashable, Sendable {
        /// When the chain ends at one of Apple's roots (the default; other anchors are not Apple's to mark).
        case underAppleRoots
        /// Under every anchor, for chains made to look like Apple's (the test chains of Apple's libraries).
        case always
    }

    public let anchors: TrustAnchors
    public let markerPolicy: MarkerPolicy
    /// The largest JWS (or notification body) accepted, in bytes; checked before anything else.
    public let maximumSize: Int
    /// Decoded certificates, which may be shared with other verifiers.
    public let certificateCache: JWSCertificateCache

    /// The anchors are kept in `certificateCache` too, for JWS whose `x5c` carries a copy of theirs.
    /// - Throws: ``CryptoError`` when no anchor is given.
    public init(
        trustAnchors: [Certificate],
        markerPolicy: MarkerPolicy = .underAppleRoots,
        maximumSize: Int = JWSVerifier.defaultMaximumSize,
        certificateCache: JWSCertificateCache = JWSCertificateCache()
    ) throws(CryptoError) {
        anchors = try TrustAnchors(trustAnchors)
        self.markerPolicy = markerPolicy
        self.maximumSize = maximumSize
        certificateCache.keep(trustAnchors)
        self.certificateCache = certificateCache
    }

    /// Verifies a JWS given as text.
    public func verify(_ compact: String, at time: ReceiptDate? = nil) throws(JWSError) -> VerifiedJWS {
        try verify(Array(compact.utf8), at: time)
    }

    /// Verifies one JWS compact serialization.
    ///
    /// - Parameter time: when to check the certificates' validity; by default the payload's `signedDate` (for an app
    ///   transaction without one, its `receiptCreationDate`, which Apple defines as its signing date).
    public func verify(_ compact: [UInt8], at time: ReceiptDate? = nil) throws(JWSError) -> VerifiedJWS {
        guard compact.count <= maximumSize else {
            throw JWSError(.tooLarge, "the JWS is \(compact.count) bytes; the limit is \(maximumSize)")
        }
        let parts = try Self.split(compact)
        let header = try Self.header(compact[parts.header])
        let payloadBytes = try Self.decode(compact[parts.payload], part: "payload")
        let signature = try Self.decode(compact[parts.signature], part: "signature")
        let certificates = try decodeChain(header.x5c)
        guard let leaf = certificates.first else {
            throw JWSError(.missingCertificateChain, "header.x5c is empty")
        }
        try Self.verifySignature(signature, over: compact[..<parts.payload.endIndex], leaf: leaf)
        let payload = try Self.payloadObject(payloadBytes)
        let validationTime: ReceiptDate
        if let time { validationTime = time } else { validationTime = try Self.signingDate(of: payload) }
        let chain = try validateChain(certificates, at: validationTime)
        return VerifiedJWS(
            header: header.object, payload: payload, payloadBytes: payloadBytes, compact: compact,
            keyID: header.keyID, chain: chain, validationTime: validationTime)
    }

    /// Verifies a signed transaction (`signedTransactionInfo`) and applies the caller's checks.
    public func verifyTransaction(
        _ compact: [UInt8],
        expecting expectations: JWSExpectations = JWSExpectations(),
        at time: ReceiptDate? = nil
    ) throws(JWSError) -> SignedTransaction {
        try verify(compact, at: time).transaction(expecting: expectations)
    }

    /// Verifies signed renewal info (`signedRenewalInfo`) and applies the caller's checks.
    public func verifyRenewalInfo(
        _ compact: [UInt8],
        expecting expectations: JWSExpectations = JWSExpectations(),
        at time: ReceiptDate? = nil
    ) throws(JWSError) -> SignedRenewalInfo {
        try verify(compact, at: time).renewalInfo(expecting: expectations)
    }

    /// Verifies a signed app transaction and applies the caller's checks.
    public func verifyAppTransaction(
        _ compact: [UInt8],
        expecting expectations: JWSExpectations = JWSExpectations(),
        at time: ReceiptDate? = nil
    ) throws(JWSError) -> SignedAppTransaction {
        try verify(compact, at: time).appTransaction(expecting: expectations)
    }

    /// The header and payload of `compact` as JSON objects, decoded without any check of signature or trust:
    /// for showing what a JWS claims, never for believing it.
    public static func decodeUnverified(_ compact: [UInt8]) throws(JWSError) -> (
        header: JSONObject, payload: JSONObject
    ) {
        let parts = try split(compact)
        var objects: [JSONObject] = []
        for (range, name) in [(parts.header, "header"), (parts.payload, "payload")] {
            let bytes = try decode(compact[range], part: name)
            guard case .object(let object)? = try? JSONValue(parsing: bytes) else {
                throw JWSError(.malformed, "the \(name) is not a JSON object")
            }
            objects.append(object)
        }
        return (objects[0], objects[1])
    }

    // MARK: - Structure

    /// The ranges of the three parts, which must all be non-empty.
    static func split(
        _ compact: [UInt8]
    ) throws(JWSError) -> (header: Range<Int>, payload: Range<Int>, signature: Range<Int>) {
        var dots: [Int] = []
        for index in compact.indices where compact[index] == UInt8(ascii: ".") {
            dots.append(index)
            if dots.count > 2 { break }
        }
        guard dots.count == 2 else {
            throw JWSError(
                .malformed,
                dots.count < 2
                    ? "the text has \(dots.count + 1) dot-separated parts; a JWS has exactly 3 (header.payload.signature)"
                    : "the text has more than 3 dot-separated parts; a JWS has exactly 3 (header.payload.signature)")
        }
        let ranges = (0..<dots[0], (dots[0] + 1)..<dots[1], (dots[1] + 1)..<compact.count)
        let names = ["header", "payload", "signature"]
        for (range, name) in zip([ranges.0, ranges.1, ranges.2], names) where range.isEmpty {
            throw JWSError(.malformed, "the \(name) part is empty")
        }
        return (ranges.0, ranges.1, ranges.2)
    }

    static func decode(_ part: ArraySlice<UInt8>, part name: String) throws(JWSError) -> [UInt8] {
        do {
            return try Base64URL.decode(part)
        } catch {
            throw JWSError(.malformed, "\(name) part: \(error)")
        }
    }

    /// What the header says, checked member by member.
    private struct Header {
        let object: JSONObject
        let x5c: [JSONValue]
        let keyID: String?
    }

    private static func header(_ part: ArraySlice<UInt8>) throws(JWSError) -> Header {
        let bytes = try decode(part, part: "header")
        let value: JSONValue
        do {
            value = try JSONValue(parsing: bytes, maximumDepth: 4)
        } catch {
            throw JWSError(.malformed, "header is not JSON: \(error)")
        }
        guard case .object(let object) = value else {
            throw JWSError(.malformed, "header is \(value.kindName); expected a JSON object")
        }
        switch object["alg"] {
        case .string("ES256")?: break
        case .string(let algorithm)?:
            throw JWSError(.unsupportedAlgorithm, "header.alg is \"\(algorithm)\"; only \"ES256\" is accepted")
        case let other?: throw JWSError(.malformed, "header.alg is \(other.kindName); expected a string")
        case nil: throw JWSError(.malformed, "header.alg is absent")
        }
        let x5c: [JSONValue]
        switch object["x5c"] {
        case .array(let certificates)?: x5c = certificates
        case let other?: throw JWSError(.malformed, "header.x5c is \(other.kindName); expected an array of strings")
        case nil: throw JWSError(.missingCertificateChain, "header.x5c is absent")
        }
        for key in object.keys where !headerParameters.contains(key) {
            throw JWSError(
                .unsupportedHeader,
                "header parameter \"\(key)\" is not supported (only \(headerParameters.sorted().joined(separator: ", ")))"
            )
        }
        switch object["typ"] {
        case nil: break
        case .string(let type)? where type.uppercased() == "JWT": break
        case let other?:
            throw JWSError(.unsupportedHeader, "header.typ is \(describe(other)); only \"JWT\" is accepted")
        }
        var keyID: String?
        switch object["kid"] {
        case nil: break
        case .string(let identifier)?: keyID = identifier
        case let other?: throw JWSError(.malformed, "header.kid is \(other.kindName); expected a string")
        }
        return Header(object: object, x5c: x5c, keyID: keyID)
    }

    private static func describe(_ value: JSONValue) -> String {
        if case .string(let text) = value { return "\"\(text)\"" }
        return value.kindName
    }

    /// The `x5c` certificates, leaf first: each strict standard base64 (no whitespace) of one DER certificate.
    private func decodeChain(_ x5c: [JSONValue]) throws(JWSError) -> [Certificate] {
        guard !x5c.isEmpty else { throw JWSError(.missingCertificateChain, "header.x5c is empty") }
        guard x5c.count <= Self.maximumChainLength else {
            throw JWSError(
                .invalidCertificate,
                "header.x5c has \(x5c.count) certificates; at most \(Self.maximumChainLength) are accepted")
        }
        var certificates: [Certificate] = []
        for (index, element) in x5c.enumerated() {
            guard case .string(let text) = element else {
                throw JWSError(.malformed, "header.x5c[\(index)] is \(element.kindName); expected a string")
            }
            let encoded = Array(text.utf8)
            guard !encoded.contains(where: { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D }) else {
                throw JWSError(.invalidCertificate, "header.x5c[\(index)] contains whitespace")
            }
            do {
                certificates.append(try certificateCache.certificate(try Base64.decode(encoded)))
            } catch {
                throw JWSError(.invalidCertificate, "header.x5c[\(index)]: \(error)")
            }
        }
        return certificates
    }

    // MARK: - Signature

    /// Checks the 64-byte `r ‖ s` signature over `signingInput` (the ASCII `header.payload`) with the leaf's key.
    private static func verifySignature(_ raw: [UInt8], over signingInput: ArraySlice<UInt8>, leaf: Certificate)
        throws(JWSError)
    {
        let key: PublicKey
        do {
            key = try leaf.publicKey
        } catch {
            throw JWSError(.invalidCertificate, "header.x5c[0] (\(leaf.subject)): \(error)")
        }
        guard case .ec(curve: "P-256") = key.algorithm else {
            throw JWSError(
                .unsupportedAlgorithm,
                "header.x5c[0] (\(leaf.subject)) has a \(key.algorithm) key; ES256 requires EC P-256")
        }
        let der = try ES256Signature.der(fromRaw: raw)
        guard key.isValidSignature(der[...], for: signingInput, digest: .sha256) else {
            throw JWSError(
                .invalidSignature,
                "the ES256 signature does not verify over header.payload with the key of header.x5c[0] "
                    + "(\(leaf.subject))")
        }
    }

    // MARK: - Payload

    private static func payloadObject(_ bytes: [UInt8]) throws(JWSError) -> JSONObject {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: bytes)
        } catch {
            throw JWSError(.invalidPayload, "payload is not JSON: \(error)")
        }
        guard case .object(let object) = value else {
            throw JWSError(.invalidPayload, "payload is \(value.kindName); expected a JSON object")
        }
        return object
    }

    /// `signedDate`, or for an app transaction (which has none) `receiptCreationDate`.
    private static func signingDate(of payload: JSONObject) throws(JWSError) -> ReceiptDate {
        let fields = PayloadFields(payload, path: "payload")
        if let signed = try fields.date("signedDate") { return signed }
        if let created = try fields.date("receiptCreationDate") { return created }
        throw JWSError(
            .missingSignedDate,
            "payload has no signedDate (nor receiptCreationDate) to check the certificates at, and no time was given")
    }

    // MARK: - Chain

    /// Validates `certificates` (leaf first, as `x5c` lists them) against the pinned anchors at `time`, then
    /// applies the marker policy.
    ///
    /// - Returns: the validated chain, leaf first, anchor last.
    public func validateChain(_ certificates: [Certificate], at time: ReceiptDate) throws(JWSError) -> [Certificate] {
        guard let leaf = certificates.first else { throw JWSError(.missingCertificateChain, "no certificates") }
        let chain: [Certificate]
        switch anchors.validateChain(
            leaf: leaf, intermediates: Array(certificates.dropFirst()), at: time.secondsSince1970)
        {
        case .success(let validated): chain = validated
        case .failure(let error):
            let code: JWSError.Code =
                switch error.reason {
                case .untrusted: .untrustedChain
                case .expired: .certificateExpired
                case .notYetValid: .certificateNotYetValid
                case .invalidCertificate, .invalidPurpose: .invalidCertificate
                }
            throw JWSError(code, "certificate chain at \(time.rfc3339): \(error)")
        }
        for (depth, certificate) in chain.enumerated().dropFirst() where !certificate.isCertificateAuthority {
            throw JWSError(
                .invalidCertificate,
                "certificate \(depth) (\(certificate.subject)) issues another certificate but is not a CA "
                    + "(basicConstraints cA is not TRUE)")
        }
        if leaf.keyUsageForbidsSigning {
            throw JWSError(.invalidCertificate, "header.x5c[0]'s keyUsage does not include digitalSignature")
        }
        let underAppleRoot = chain.last.map(AppleCertificates.isAppleRoot) ?? false
        if underAppleRoot || markerPolicy == .always, let violation = AppleCertificates.markerViolation(in: chain) {
            throw JWSError(.missingMarkerExtension, violation)
        }
        return chain
    }
}
