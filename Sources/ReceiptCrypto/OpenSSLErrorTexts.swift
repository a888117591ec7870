internal import CReceiptErrorTexts

/// OpenSSL's explanations of its errors ("wrong tag", "no start line"), which ``CryptoError`` and chain failures
/// quote. OpenSSL 3.0 loads all of them at every start, the first time any thread touches its error queue; a
/// program that starts often and seldom fails can have them loaded when a failure is described instead.
public enum OpenSSLErrorTexts {
    /// Has OpenSSL skip loading its error texts at start; they are then loaded the first time this module
    /// describes an OpenSSL failure, which reads the same as before but for the few libraries OpenSSL gives no
    /// loader of their own (providers, decoders, encoders), whose errors then show their reason common to all
    /// libraries ("unsupported") or their number. Takes effect only as the process's first use of OpenSSL; later,
    /// the texts are loaded already and nothing changes. Libraries other than this one that describe OpenSSL's
    /// errors themselves see only the texts loaded so far.
    public static func loadWhenNeeded() {
        _ = receipt_error_texts_defer()
    }

    /// Makes sure the texts are loaded, once per process, before an error of OpenSSL's is described.
    static func ensureLoaded() {
        _ = loaded
    }

    private static let loaded: Bool = {
        receipt_error_texts_load()
        return true
    }()
}
