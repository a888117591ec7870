internal import CReceiptOpenSSL
internal import CReceiptShims

/// Why a certificate chain was not accepted, classified from OpenSSL's verification result.
public struct ChainValidationError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Reason: Hashable, Sendable {
        /// No path to a pinned anchor: missing issuer, an unpinned self-signed certificate, a chain too long.
        case untrusted
        /// A certificate in the chain had expired at the validation time.
        case expired
        /// A certificate in the chain was not yet valid at the validation time.
        case notYetValid
        /// A certificate is not acceptable in its place: bad signature, issuer that is not a CA, unknown critical
        /// extension, undecodable field.
        case invalidCertificate
        /// A certificate may not be used for this purpose.
        case invalidPurpose
    }

    public let reason: Reason
    /// OpenSSL's text for the failure, e.g. "certificate has expired".
    public let detail: String
    /// Position in the chain: 0 is the signer.
    public let depth: Int
    /// Subject of the certificate at fault, when known.
    public let subject: String

    public var description: String {
        subject.isEmpty ? detail : "\(detail) (certificate \(depth): \(subject))"
    }
}

/// Certificates that a caller pins as trust anchors. A chain is accepted only when it ends at one of them;
/// certificates that arrive with the data (including any root it embeds) are never trusted by themselves, and
/// neither is the system store.
public final class TrustAnchors: @unchecked Sendable {
    /// Deeper than any real receipt chain (signer, intermediate, root).
    public static let maximumChainLength = 8

    private let store: OpaquePointer
    public let certificates: [Certificate]

    /// - Throws: ``CryptoError`` when `certificates` is empty or OpenSSL cannot build the store.
    public init(_ certificates: [Certificate]) throws(CryptoError) {
        guard !certificates.isEmpty else { throw CryptoError(.operationFailed("pinning trust anchors: none given")) }
        guard let store = X509_STORE_new() else {
            throw CryptoError(.operationFailed("allocating a certificate store"))
        }
        for certificate in certificates where X509_STORE_add_cert(store, certificate.pointer) != 1 {
            // Adding the same certificate twice is reported as an error but leaves the store correct.
            clearOpenSSLErrors()
        }
        self.store = store
        self.certificates = certificates
    }

    deinit { X509_STORE_free(store) }

    /// Builds the chain from `leaf` through any of `intermediates` to a pinned anchor and checks it at `time`
    /// (seconds since 1970), or with `time == nil` at no time at all (every check but validity periods):
    /// signatures, validity periods, issuers being CAs. No key purpose is required.
    ///
    /// - Returns: the chain, leaf first, anchor last.
    public func validateChain(
        leaf: Certificate,
        intermediates: [Certificate],
        at time: Int64?
    ) -> Result<[Certificate], ChainValidationError> {
        clearOpenSSLErrors()
        guard let context = X509_STORE_CTX_new(), let untrusted = receipt_sk_X509_new_null() else {
            return .failure(ChainValidationError(reason: .untrusted, detail: "out of memory", depth: 0, subject: ""))
        }
        defer {
            X509_STORE_CTX_free(context)
            receipt_sk_X509_free(untrusted)
        }
        for certificate in intermediates { _ = receipt_sk_X509_push(untrusted, certificate.pointer) }
        guard X509_STORE_CTX_init(context, store, leaf.pointer, untrusted) == 1 else {
            return .failure(
                ChainValidationError(reason: .untrusted, detail: drainOpenSSLErrors(), depth: 0, subject: ""))
        }
        let parameters = X509_STORE_CTX_get0_param(context)
        if let time {
            X509_STORE_CTX_set_time(context, 0, time_t(time))
        } else {
            X509_VERIFY_PARAM_set_flags(parameters, UInt(X509_V_FLAG_NO_CHECK_TIME))
        }
        X509_VERIFY_PARAM_set_depth(parameters, Int32(Self.maximumChainLength))
        let verified = X509_verify_cert(context) == 1
        defer { clearOpenSSLErrors() }
        guard verified else {
            let code = X509_STORE_CTX_get_error(context)
            let subject = X509_STORE_CTX_get_current_cert(context).flatMap { current -> String? in
                X509_up_ref(current)
                return try? Certificate(owning: current).subject
            }
            return .failure(
                ChainValidationError(
                    reason: Self.classify(code), detail: String(cString: X509_verify_cert_error_string(Int(code))),
                    depth: Int(X509_STORE_CTX_get_error_depth(context)), subject: subject ?? ""))
        }
        guard let chain = X509_STORE_CTX_get1_chain(context) else {
            return .failure(
                ChainValidationError(reason: .untrusted, detail: "no chain was built", depth: 0, subject: ""))
        }
        defer { receipt_sk_X509_pop_free(chain) }
        var certificates: [Certificate] = []
        for index in 0..<receipt_sk_X509_num(chain) {
            guard let certificate = receipt_sk_X509_value(chain, index), X509_up_ref(certificate) == 1,
                let owned = try? Certificate(owning: certificate)
            else {
                return .failure(
                    ChainValidationError(
                        reason: .invalidCertificate, detail: "undecodable chain", depth: Int(index), subject: ""))
            }
            certificates.append(owned)
        }
        return .success(certificates)
    }

    private static func classify(_ code: Int32) -> ChainValidationError.Reason {
        switch code {
        case X509_V_ERR_CERT_HAS_EXPIRED: .expired
        case X509_V_ERR_CERT_NOT_YET_VALID: .notYetValid
        case X509_V_ERR_INVALID_PURPOSE: .invalidPurpose
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY,
            X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT, X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN,
            X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE, X509_V_ERR_CERT_UNTRUSTED, X509_V_ERR_CERT_CHAIN_TOO_LONG,
            X509_V_ERR_CERT_REJECTED:
            .untrusted
        default: .invalidCertificate
        }
    }
}
