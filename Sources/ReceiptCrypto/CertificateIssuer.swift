internal import CReceiptOpenSSL
import ReceiptDER

/// What a new certificate is for; each role gets the extensions that role needs.
public enum CertificateRole: Sendable {
    /// A self-signed root: `CA:TRUE`, keyCertSign and cRLSign.
    case root
    /// An intermediate CA that may only sign end-entity certificates: `CA:TRUE, pathlen:0`.
    case intermediate
    /// An end-entity signing certificate: `CA:FALSE`, digitalSignature only.
    case signer
    /// A self-signed certificate that signs receipts itself, like Xcode's StoreKit test certificate:
    /// `CA:TRUE`, digitalSignature and keyCertSign.
    case selfSignedSigner
}

/// Issues X.509 v3 certificates (SHA-256 signatures, random 127-bit serial numbers).
public enum CertificateIssuer {
    /// Creates a certificate for `subjectKey`.
    ///
    /// - Parameters:
    ///   - issuer: the issuing certificate and its key; nil for a self-signed root.
    ///   - notBefore, notAfter: the validity period in seconds since 1970.
    ///   - markers: extra non-critical extensions whose value is NULL, such as Apple's marker extensions that
    ///     single out receipt-signing certificates.
    public static func issue(
        commonName: String,
        organization: String,
        role: CertificateRole,
        subjectKey: PrivateKey,
        issuer: (certificate: Certificate, key: PrivateKey)?,
        notBefore: Int64,
        notAfter: Int64,
        markers: [ASN1ObjectIdentifier] = []
    ) throws(CryptoError) -> Certificate {
        clearOpenSSLErrors()
        guard let certificate = X509_new() else { throw CryptoError(.operationFailed("allocating a certificate")) }
        // From here on `wrapped` owns the X509 and frees it on every path.
        let wrapped = PendingCertificate(certificate)
        guard X509_set_version(certificate, 2) == 1 else { throw CryptoError(.operationFailed("setting the version")) }
        try setRandomSerialNumber(certificate)
        try setSubject(certificate, commonName: commonName, organization: organization)
        let issuerName =
            issuer.map { X509_get_subject_name($0.certificate.pointer) } ?? X509_get_subject_name(certificate)
        guard X509_set_issuer_name(certificate, issuerName) == 1,
            ASN1_TIME_set(X509_getm_notBefore(certificate), time_t(notBefore)) != nil,
            ASN1_TIME_set(X509_getm_notAfter(certificate), time_t(notAfter)) != nil,
            X509_set_pubkey(certificate, subjectKey.pointer) == 1
        else { throw CryptoError(.operationFailed("filling in the certificate")) }

        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuer?.certificate.pointer ?? certificate, certificate, nil, nil, 0)
        let extensions: [(Int32, String)] =
            switch role {
            case .root: [(NID_basic_constraints, "critical,CA:TRUE"), (NID_key_usage, "critical,keyCertSign,cRLSign")]
            case .intermediate:
                [
                    (NID_basic_constraints, "critical,CA:TRUE,pathlen:0"),
                    (NID_key_usage, "critical,keyCertSign,cRLSign"),
                ]
            case .signer: [(NID_basic_constraints, "critical,CA:FALSE"), (NID_key_usage, "critical,digitalSignature")]
            case .selfSignedSigner:
                [(NID_basic_constraints, "critical,CA:TRUE"), (NID_key_usage, "critical,digitalSignature,keyCertSign")]
            }
        for (nid, value) in extensions + [
            (NID_subject_key_identifier, "hash"), (NID_authority_key_identifier, "keyid:always"),
        ] {
            guard let extensionPointer = X509V3_EXT_conf_nid(nil, &context, nid, value) else {
                throw CryptoError(.operationFailed("building extension \(value)"))
            }
            defer { X509_EXTENSION_free(extensionPointer) }
            guard X509_add_ext(certificate, extensionPointer, -1) == 1 else {
                throw CryptoError(.operationFailed("adding extension \(value)"))
            }
        }
        for marker in markers { try addMarker(marker, to: certificate) }
        let signingKey = issuer?.key ?? subjectKey
        guard X509_sign(certificate, signingKey.pointer, DigestAlgorithm.sha256.implementation) > 0 else {
            throw CryptoError(.operationFailed("signing the certificate"))
        }
        return try wrapped.release()
    }

    /// Adds a non-critical extension `marker` whose value is the DER NULL.
    private static func addMarker(_ marker: ASN1ObjectIdentifier, to certificate: OpaquePointer) throws(CryptoError) {
        guard let object = OBJ_txt2obj(marker.description, 1) else {
            throw CryptoError(.operationFailed("encoding extension identifier \(marker)"))
        }
        defer { ASN1_OBJECT_free(object) }
        guard let value = ASN1_OCTET_STRING_new() else {
            throw CryptoError(.operationFailed("allocating an extension"))
        }
        defer { ASN1_OCTET_STRING_free(value) }
        let null: [UInt8] = [0x05, 0x00]
        guard ASN1_OCTET_STRING_set(value, null, Int32(null.count)) == 1,
            let extensionPointer = X509_EXTENSION_create_by_OBJ(nil, object, 0, value)
        else { throw CryptoError(.operationFailed("building extension \(marker)")) }
        defer { X509_EXTENSION_free(extensionPointer) }
        guard X509_add_ext(certificate, extensionPointer, -1) == 1 else {
            throw CryptoError(.operationFailed("adding extension \(marker)"))
        }
    }

    private static func setRandomSerialNumber(_ certificate: OpaquePointer) throws(CryptoError) {
        guard let number = BN_new() else { throw CryptoError(.operationFailed("allocating a serial number")) }
        defer { BN_free(number) }
        guard BN_rand(number, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) == 1,
            BN_to_ASN1_INTEGER(number, X509_get_serialNumber(certificate)) != nil
        else { throw CryptoError(.operationFailed("choosing a serial number")) }
    }

    private static func setSubject(_ certificate: OpaquePointer, commonName: String, organization: String)
        throws(CryptoError)
    {
        guard let name = X509_NAME_new() else { throw CryptoError(.operationFailed("allocating a name")) }
        defer { X509_NAME_free(name) }
        for (field, value) in [("O", organization), ("CN", commonName)] {
            let bytes = Array(value.utf8)
            guard X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8, bytes, Int32(bytes.count), -1, 0) == 1 else {
                throw CryptoError(.operationFailed("setting \(field)=\(value)"))
            }
        }
        guard X509_set_subject_name(certificate, name) == 1 else {
            throw CryptoError(.operationFailed("setting the subject"))
        }
    }
}

/// Holds a freshly allocated `X509` until it is complete, freeing it unless ``release()`` hands it on.
private final class PendingCertificate {
    private var pointer: OpaquePointer?

    init(_ pointer: OpaquePointer) { self.pointer = pointer }

    deinit { if let pointer { X509_free(pointer) } }

    func release() throws(CryptoError) -> Certificate {
        guard let pointer else { throw CryptoError(.operationFailed("releasing a certificate twice")) }
        self.pointer = nil
        return try Certificate(owning: pointer)
    }
}
