internal import CReceiptOpenSSLStart

/// What OpenSSL 3.0 builds at every start that working with receipts seldom or never reads: the texts that explain
/// its errors ("wrong tag", "no start line"), which ``CryptoError`` and chain failures quote, and its table of
/// ciphers by name (nothing here encrypts). A program that starts often can leave both out; this module then loads
/// the error texts when it first describes a failure of OpenSSL's.
public enum OpenSSLStart {
    /// Has OpenSSL leave out its error texts and its table of ciphers by name. Takes effect only as the process's
    /// first use of OpenSSL; later, both are built already and nothing changes. Failures read as before but for the
    /// few libraries OpenSSL gives no loader of their own (providers, decoders, encoders), whose errors then show
    /// their reason common to all libraries ("unsupported") or their number. Other libraries of the process that
    /// describe OpenSSL's errors themselves see only the texts loaded so far, and find no cipher by name.
    public static func leaveOutUnusedTables() {
        _ = receipt_openssl_leave_out_unused_tables()
    }

    /// Makes sure the error texts are loaded, once per process, before an error of OpenSSL's is described.
    static func loadErrorTexts() {
        _ = errorTextsLoaded
    }

    private static let errorTextsLoaded: Bool = {
        receipt_openssl_load_error_texts()
        return true
    }()
}
