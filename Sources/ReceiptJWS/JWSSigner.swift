import ReceiptCrypto
import ReceiptDER
import StrictJSON

/// Signs JSON payloads as App Store-format JWS: header `{"alg":"ES256","x5c":[…]}`, ECDSA P-256 with SHA-256 over
/// the ASCII `header.payload`, the signature as 64 bytes `r ‖ s`.
public struct JWSSigner: Sendable {
    public let key: PrivateKey
    /// The certificates written into `x5c`: the leaf (the key's certificate) first, then its issuers.
    public let chain: [Certificate]
    /// Written as the header's `kid` when set.
    public let keyID: String?
    /// The encoded header, which is the same for every payload.
    private let encodedHeader: [UInt8]

    /// - Throws: ``JWSError/Code/signingFailed`` when the key is not EC P-256, the chain is empty or longer than a
    ///   verifier accepts, the key does not belong to the first certificate, or a certificate did not issue the one
    ///   before it.
    public init(key: PrivateKey, chain: [Certificate], keyID: String? = nil) throws(JWSError) {
        guard case .ec(curve: "P-256") = key.algorithm else {
            throw JWSError(.signingFailed, "the key is \(key.algorithm); ES256 signs with EC P-256")
        }
        guard let leaf = chain.first, chain.count <= JWSVerifier.maximumChainLength else {
            throw JWSError(
                .signingFailed,
                "the chain has \(chain.count) certificates; x5c needs 1 to \(JWSVerifier.maximumChainLength)")
        }
        guard key.matches(leaf) else {
            throw JWSError(.signingFailed, "the key does not match the leaf certificate \"\(leaf.subject)\"")
        }
        for (child, parent) in zip(chain, chain.dropFirst()) where !child.isIssued(by: parent) {
            throw JWSError(
                .signingFailed,
                "chain certificate \"\(parent.subject)\" did not issue \"\(child.subject)\" (issued by \"\(child.issuer)\")"
            )
        }
        self.key = key
        self.chain = chain
        self.keyID = keyID
        var header = JSONObject()
        header["alg"] = .string("ES256")
        header["x5c"] = .array(chain.map { .string(Base64.encode($0.derEncoded)) })
        if let keyID { header["kid"] = .string(keyID) }
        encodedHeader = Base64URL.encodedBytes(JSONValue.object(header).serializedBytes())
    }

    /// The JWS compact serialization of `payload`, written as compact JSON in its member order.
    public func sign(payload: JSONObject) throws(JWSError) -> String {
        try sign(payloadBytes: JSONValue.object(payload).serializedBytes())
    }

    /// The JWS compact serialization of `payloadBytes` exactly as given (which verifiers require to be a JSON object).
    public func sign(payloadBytes: [UInt8]) throws(JWSError) -> String {
        let signingInput = encodedHeader + [UInt8(ascii: ".")] + Base64URL.encodedBytes(payloadBytes)
        let der: [UInt8]
        do {
            der = try key.signature(for: signingInput, digest: .sha256)
        } catch {
            throw JWSError(.signingFailed, "ECDSA signing: \(error)")
        }
        let raw = try ES256Signature.raw(fromDER: der)
        return String(decoding: signingInput, as: UTF8.self) + "." + Base64URL.encode(raw)
    }
}
