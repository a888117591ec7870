internal import CReceiptOpenSSL

/// A failure in the OpenSSL layer, with OpenSSL's own explanation drained from its error queue.
public struct CryptoError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Reason: Hashable, Sendable {
        /// Bytes that are not a certificate (DER or PEM), or a certificate with trailing data.
        case invalidCertificate
        /// Bytes that are not a private key in a supported form.
        case invalidPrivateKey
        /// Bytes that are not a public key (a SubjectPublicKeyInfo, PEM or DER).
        case invalidPublicKey
        /// A private key protected by a passphrase.
        case encryptedPrivateKey
        /// A key type or size the receipt format does not use.
        case unsupportedKey
        /// The private key does not belong to the certificate.
        case keyDoesNotMatchCertificate
        /// OpenSSL could not complete an operation it should be able to do (signing, encoding, allocation).
        case operationFailed(String)
    }

    public let reason: Reason
    /// OpenSSL's error queue at the point of failure, oldest first; empty when OpenSSL said nothing.
    public let openSSLDetail: String

    init(_ reason: Reason) {
        self.reason = reason
        self.openSSLDetail = drainOpenSSLErrors()
    }

    public var description: String {
        let what: String
        switch reason {
        case .invalidCertificate: what = "not a valid X.509 certificate"
        case .invalidPrivateKey: what = "not a valid private key (PKCS#8, PKCS#1 RSA or SEC1 EC, PEM or DER)"
        case .invalidPublicKey: what = "not a valid public key (a PEM PUBLIC KEY block or DER SubjectPublicKeyInfo)"
        case .encryptedPrivateKey:
            what = "the private key is encrypted; decrypt it first (openssl pkey -in KEY -out PLAIN)"
        case .unsupportedKey: what = "unsupported key: use RSA (2048 bits or more) or EC P-256"
        case .keyDoesNotMatchCertificate: what = "the private key does not match the certificate's public key"
        case .operationFailed(let operation): what = "\(operation) failed"
        }
        return openSSLDetail.isEmpty ? what : "\(what) (\(openSSLDetail))"
    }
}

/// Empties this thread's OpenSSL error queue into one line of text, oldest error first; "" when it is empty, without
/// loading OpenSSL's error texts for nothing (a key refused by our own checks leaves the queue empty).
func drainOpenSSLErrors() -> String {
    guard ERR_peek_error() != 0 else { return "" }
    OpenSSLStart.loadErrorTexts()
    var messages: [String] = []
    while true {
        var data: UnsafePointer<CChar>?
        var flags: Int32 = 0
        let code = ERR_get_error_all(nil, nil, nil, &data, &flags)
        if code == 0 { break }
        var text = ERR_reason_error_string(code).map { String(cString: $0) } ?? "error \(code)"
        if flags & ERR_TXT_STRING != 0, let data, data.pointee != 0 {
            text += " (\(String(cString: data)))"
        }
        messages.append(text)
    }
    return messages.joined(separator: "; ")
}

/// Clears errors left on the queue by an earlier, handled failure, so they are not blamed on the next one.
/// (Looking first is much cheaper than clearing an empty queue, which hot paths would otherwise pay every time.)
func clearOpenSSLErrors() {
    if ERR_peek_error() != 0 { ERR_clear_error() }
}
