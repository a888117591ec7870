internal import CReceiptOpenSSL

/// The way most receipt code verifies with OpenSSL: decode the whole PKCS#7 (`d2i_PKCS7`, which decodes every
/// embedded certificate) and call `PKCS7_verify` against a store of anchors. Kept as the baseline that benchmarks
/// compare with; the verifier does not use it.
public final class OpenSSLPKCS7Verifier: @unchecked Sendable {
    private let store: OpaquePointer

    /// A verifier for one validation time (seconds since 1970) and no key purpose; not for concurrent use.
    public init(anchors: [Certificate], at time: Int64) throws(CryptoError) {
        guard let store = X509_STORE_new() else { throw CryptoError(.operationFailed("allocating a store")) }
        for anchor in anchors { X509_STORE_add_cert(store, anchor.pointer) }
        let parameters = X509_STORE_get0_param(store)
        X509_VERIFY_PARAM_set_time(parameters, time_t(time))
        X509_VERIFY_PARAM_set_purpose(parameters, X509_PURPOSE_ANY)
        clearOpenSSLErrors()
        self.store = store
    }

    deinit { X509_STORE_free(store) }

    /// Whether `der` decodes as PKCS#7 and verifies (signature and chain); the content is written nowhere.
    public func verify(_ der: [UInt8]) -> Bool {
        defer { clearOpenSSLErrors() }
        let decoded: UnsafeMutablePointer<PKCS7>? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_PKCS7(nil, &cursor, buffer.count)
        }
        guard let pkcs7 = decoded, let output = BIO_new(BIO_s_null()) else { return false }
        defer {
            PKCS7_free(pkcs7)
            BIO_free(output)
        }
        return PKCS7_verify(pkcs7, nil, store, nil, output, PKCS7_BINARY) == 1
    }
}
