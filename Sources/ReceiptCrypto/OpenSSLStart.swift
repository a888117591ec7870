internal import CReceiptOpenSSLStart

/// What OpenSSL 3.0 builds at every start that working with receipts seldom or never reads: the texts that explain
/// its errors ("wrong tag", "no start line"), which ``CryptoError`` and chain failures quote, and its table of
/// ciphers by name (nothing here encrypts); and how it reads the first certificates, which costs it more than
/// anything else a one-receipt run does. A program that starts often can leave both tables out, this module then
/// loading the error texts when it first describes a failure of OpenSSL's, and, if it makes no keys and no TLS
/// connections meanwhile, have certificates' keys read directly.
public enum OpenSSLStart {
    /// Has OpenSSL leave out its error texts and its table of ciphers by name. Takes effect only as the process's
    /// first use of OpenSSL; later, both are built already and nothing changes. Failures read as before but for the
    /// few libraries OpenSSL gives no loader of their own (providers, decoders, encoders), whose errors then show
    /// their reason common to all libraries ("unsupported") or their number. Other libraries of the process that
    /// describe OpenSSL's errors themselves see only the texts loaded so far, and find no cipher by name.
    public static func leaveOutUnusedTables() {
        _ = receipt_openssl_leave_out_unused_tables()
    }

    /// Has the certificates this process reads from now on take their RSA and EC keys from OpenSSL's own readers of
    /// those keys, as OpenSSL 1.1 did, rather than through 3.0's provider decoders, which it finds by going through
    /// every decoder and key manager it has: about a million instructions a certificate, five million the first
    /// time, most of OpenSSL's work in a run that verifies one receipt. The keys read are the same, a malformed one
    /// refused alike. Returns whether it could (OpenSSL built with its engines and its 3.0 deprecated functions); if
    /// not, certificates are read as before.
    ///
    /// OpenSSL 3.0 reads a key so only for a type an engine has registered methods for: each certificate is then read
    /// alone, with an engine that offers OpenSSL's own RSA and EC methods registered while it is read. Meanwhile those
    /// methods also serve other threads that make an RSA or EC context by type or by name, key generation among them,
    /// under which an EC key cannot be made by curve name (TLS's key exchange on P-256 makes one so). Call this only
    /// in a process that makes no keys and no TLS connections while it reads certificates, as `receipt verify` does.
    @discardableResult
    public static func readCertificateKeysDirectly() -> Bool {
        receipt_openssl_read_certificate_keys_directly() == 1
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
