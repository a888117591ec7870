internal import CReceiptOpenSSL
internal import CReceiptShims

/// OpenSSL's own CMS verification (`CMS_verify`), as an independent judge of the same envelope: the signature
/// over the content (or signed attributes) and the signer's chain to the given anchors at a given time, with no
/// key purpose required. It knows nothing of receipts and checks nothing of the payload.
public enum OpenSSLCMSVerification {
    public enum Outcome: Hashable, Sendable {
        /// OpenSSL verified signature and chain; the eContent octets it returned.
        case verified(content: [UInt8])
        /// OpenSSL could not parse the bytes as CMS.
        case unparseable
        /// OpenSSL parsed the bytes but rejected the signature or the chain, with its reason.
        case rejected(String)
    }

    /// Verifies `der` with `CMS_verify` against `anchors` at `time` (seconds since 1970); with
    /// `checkingChain == false`, only the signature (`CMS_NO_SIGNER_CERT_VERIFY`).
    public static func verify(_ der: [UInt8], anchors: [Certificate], at time: Int64, checkingChain: Bool = true)
        -> Outcome
    {
        clearOpenSSLErrors()
        defer { clearOpenSSLErrors() }
        guard let input = try? MemoryBIO(copying: der), let output = try? MemoryBIO() else {
            return .rejected("out of memory")
        }
        guard let cms = d2i_CMS_bio(input.pointer, nil) else { return .unparseable }
        defer { CMS_ContentInfo_free(cms) }
        // A store per call: the verification time lives in the store's parameters.
        guard let store = X509_STORE_new() else { return .rejected("out of memory") }
        defer { X509_STORE_free(store) }
        for anchor in anchors { X509_STORE_add_cert(store, anchor.pointer) }
        let parameters = X509_STORE_get0_param(store)
        X509_VERIFY_PARAM_set_time(parameters, time_t(time))
        X509_VERIFY_PARAM_set_purpose(parameters, X509_PURPOSE_ANY)
        let flags = UInt32(CMS_BINARY) | (checkingChain ? 0 : UInt32(CMS_NO_SIGNER_CERT_VERIFY))
        guard CMS_verify(cms, nil, store, nil, output.pointer, flags) == 1 else {
            return .rejected(drainOpenSSLErrors())
        }
        return .verified(content: output.contents)
    }
}

/// What OpenSSL's CMS parser makes of a SignedData whose one signature it has checked (not its chain).
public struct OpenSSLSignedContent: Sendable {
    /// The eContent octets.
    public let content: [UInt8]
    /// The eContentType in dotted form.
    public let contentType: String
    public let signer: Certificate
    /// Every embedded X.509 certificate (OpenSSL leaves out other certificate choices).
    public let certificates: [Certificate]
    public let digest: DigestAlgorithm?
}

extension OpenSSLCMSVerification {
    /// Parses `der` with OpenSSL's CMS parser, which must consume every byte, requires exactly one signer and checks
    /// its signature over the content (or signed attributes), without judging its chain.
    ///
    /// Why OpenSSL did not return signed content.
    public enum Failure: Error, Hashable, Sendable {
        /// Not a SignedData OpenSSL can parse, or bytes after it.
        case unparseable
        /// Not exactly one signer.
        case signerCount(Int)
        /// The signature does not verify, or the signer certificate is missing; OpenSSL's reason.
        case invalidSignature(String)
    }

    public static func signedContent(_ der: [UInt8]) -> Result<OpenSSLSignedContent, Failure> {
        clearOpenSSLErrors()
        defer { clearOpenSSLErrors() }
        guard let cms = decodeWhole(der, with: { d2i_CMS_ContentInfo(nil, $0, $1) }, free: CMS_ContentInfo_free) else {
            return .failure(.unparseable)
        }
        defer { CMS_ContentInfo_free(cms) }
        guard OBJ_obj2nid(CMS_get0_type(cms)) == NID_pkcs7_signed, let signers = CMS_get0_SignerInfos(cms),
            let output = try? MemoryBIO()
        else { return .failure(.unparseable) }
        let count = Int(receipt_sk_CMS_SignerInfo_num(signers))
        guard count == 1, let signerInfo = receipt_sk_CMS_SignerInfo_value(signers, 0) else {
            return .failure(.signerCount(count))
        }
        let flags = UInt32(CMS_BINARY) | UInt32(CMS_NO_SIGNER_CERT_VERIFY)
        guard CMS_verify(cms, nil, nil, nil, output.pointer, flags) == 1 else {
            return .failure(.invalidSignature(drainOpenSSLErrors()))
        }
        var signerPointer: OpaquePointer?
        var digestAlgorithm: UnsafeMutablePointer<X509_ALGOR>?
        CMS_SignerInfo_get0_algs(signerInfo, nil, &signerPointer, &digestAlgorithm, nil)
        guard let signerPointer, X509_up_ref(signerPointer) == 1, let signer = try? Certificate(owning: signerPointer),
            let stack = CMS_get1_certs(cms)
        else { return .failure(.invalidSignature("no signer certificate")) }
        defer { receipt_sk_X509_pop_free(stack) }
        var certificates: [Certificate] = []
        for index in 0..<receipt_sk_X509_num(stack) {
            guard let certificate = receipt_sk_X509_value(stack, index), X509_up_ref(certificate) == 1,
                let owned = try? Certificate(owning: certificate)
            else { return .failure(.unparseable) }
            certificates.append(owned)
        }
        var digestObject: OpaquePointer?
        X509_ALGOR_get0(&digestObject, nil, nil, digestAlgorithm)
        let digest: DigestAlgorithm? =
            switch OBJ_obj2nid(digestObject) {
            case NID_sha1: .sha1
            case NID_sha256: .sha256
            default: nil
            }
        return .success(
            OpenSSLSignedContent(
                content: output.contents, contentType: objectText(CMS_get0_eContentType(cms)), signer: signer,
                certificates: certificates, digest: digest))
    }

    private static func objectText(_ object: OpaquePointer?) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        let length = OBJ_obj2txt(&buffer, Int32(buffer.count), object, 1)
        guard length > 0 else { return "" }
        return String(decoding: buffer.prefix(Int(min(length, 127))).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
