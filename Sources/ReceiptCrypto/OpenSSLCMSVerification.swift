internal import CReceiptOpenSSL

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
