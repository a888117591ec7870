internal import CReceiptOpenSSL
internal import CReceiptOpenSSLStart
internal import CReceiptShims
import ReceiptDER

/// An X.509 certificate decoded by OpenSSL, with the exact DER bytes it was read from.
///
/// Instances are immutable; OpenSSL's `X509` is reference counted and safe to read from several threads.
public final class Certificate: @unchecked Sendable, Hashable, CustomStringConvertible {
    let pointer: OpaquePointer
    /// The DER encoding exactly as received.
    public let derEncoded: [UInt8]
    /// Start of the validity period, in seconds since 1970.
    public let notBefore: Int64
    /// End of the validity period, in seconds since 1970.
    public let notAfter: Int64
    // Decoded once, when the certificate is: OpenSSL 3 is slow to decode keys, and receipts reuse certificates.
    private let decodedPublicKey: PublicKey?
    private let decodedIssuerAndSerialNumber: (issuer: ArraySlice<UInt8>, serialNumber: ArraySlice<UInt8>)?

    /// Decodes one DER certificate that fills `der` exactly.
    public convenience init(derEncoded der: some Collection<UInt8>) throws(CryptoError) {
        let bytes = Array(der)
        guard let decoded = decodeWhole(bytes, with: { receipt_d2i_X509($0, $1) }, free: X509_free) else {
            throw CryptoError(.invalidCertificate)
        }
        self.init(owning: decoded, derEncoded: bytes)
    }

    /// Takes ownership of one reference to `pointer`.
    convenience init(owning pointer: OpaquePointer) throws(CryptoError) {
        var buffer: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509(pointer, &buffer)
        guard length > 0, let buffer else {
            X509_free(pointer)
            throw CryptoError(.operationFailed("encoding a certificate"))
        }
        let der = Array(UnsafeBufferPointer(start: buffer, count: Int(length)))
        receipt_OPENSSL_free(buffer)
        self.init(owning: pointer, derEncoded: der)
    }

    private init(owning pointer: OpaquePointer, derEncoded: [UInt8]) {
        self.pointer = pointer
        self.derEncoded = derEncoded
        notBefore = Self.seconds(X509_get0_notBefore(pointer))
        notAfter = Self.seconds(X509_get0_notAfter(pointer))
        decodedPublicKey = X509_get_pubkey(pointer).map(PublicKey.init(owning:))
        decodedIssuerAndSerialNumber = try? Self.readIssuerAndSerialNumber(derEncoded)
        clearOpenSSLErrors()
    }

    /// A copy of `original` that shares nothing it counts references on while it is used: OpenSSL's decoded
    /// certificate is shared (its count raised once, here), the key is OpenSSL's copy (the same key should OpenSSL
    /// fail to copy it) and the DER bytes are copied.
    private init(copying original: Certificate) {
        X509_up_ref(original.pointer)
        pointer = original.pointer
        derEncoded = [UInt8](unsafeUninitializedCapacity: original.derEncoded.count) { buffer, count in
            count = buffer.initialize(fromContentsOf: original.derEncoded)
        }
        notBefore = original.notBefore
        notAfter = original.notAfter
        decodedPublicKey = original.decodedPublicKey.map { $0.independentCopy() ?? $0 }
        decodedIssuerAndSerialNumber = original.decodedIssuerAndSerialNumber.map { [derEncoded] in
            (derEncoded[$0.issuer.indices], derEncoded[$0.serialNumber.indices])
        }
        clearOpenSSLErrors()
    }

    deinit { X509_free(pointer) }

    /// The same certificate as an object for another thread to use: two threads that verify with one certificate
    /// object each never count references on the same object, as they would on one object they share (the
    /// decoded key's contexts, the DER bytes), and the copy costs microseconds where decoding costs hundreds (OpenSSL
    /// 3.0 decoding the key). Equal to this certificate.
    public func independentCopy() -> Certificate {
        Certificate(copying: self)
    }

    /// Every certificate in `bytes`: one or more PEM `CERTIFICATE` blocks, or a single DER certificate.
    public static func load(pemOrDER bytes: [UInt8]) throws(CryptoError) -> [Certificate] {
        guard
            bytes.starts(with: Array("-----BEGIN".utf8))
                || String(decoding: bytes, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----")
        else {
            return [try Certificate(derEncoded: bytes)]
        }
        clearOpenSSLErrors()
        let bio = try MemoryBIO(copying: bytes)
        var certificates: [Certificate] = []
        while let certificate = receipt_PEM_read_bio_X509(bio.pointer) {
            certificates.append(try Certificate(owning: certificate))
        }
        // Reading stops with "no start line" at the end of the input; anything else is a broken block.
        let endOfInput = ERR_GET_REASON(ERR_peek_last_error()) == PEM_R_NO_START_LINE
        clearOpenSSLErrors()
        guard !certificates.isEmpty, endOfInput else { throw CryptoError(.invalidCertificate) }
        return certificates
    }

    /// The certificate as a PEM block.
    public var pemEncoded: String {
        get throws(CryptoError) {
            let bio = try MemoryBIO()
            guard PEM_write_bio_X509(bio.pointer, pointer) == 1 else {
                throw CryptoError(.operationFailed("writing a PEM certificate"))
            }
            return bio.text
        }
    }

    /// The subject in RFC 2253 form, e.g. `CN=Apple Root CA,OU=Apple Certification Authority,O=Apple Inc.,C=US`.
    public var subject: String { Self.text(of: X509_get_subject_name(pointer)) }

    /// The issuer in RFC 2253 form.
    public var issuer: String { Self.text(of: X509_get_issuer_name(pointer)) }

    /// The subject's common name, or the whole subject when it has none.
    public var commonName: String {
        guard let name = X509_get_subject_name(pointer) else { return subject }
        let index = X509_NAME_get_index_by_NID(name, NID_commonName, -1)
        guard index >= 0, let entry = X509_NAME_get_entry(name, index), let data = X509_NAME_ENTRY_get_data(entry)
        else {
            return subject
        }
        var utf8: UnsafeMutablePointer<UInt8>?
        let length = ASN1_STRING_to_UTF8(&utf8, data)
        guard length >= 0, let utf8 else { return subject }
        defer { receipt_OPENSSL_free(utf8) }
        return String(decoding: UnsafeBufferPointer(start: utf8, count: Int(length)), as: UTF8.self)
    }

    /// The serial number in upper-case hex.
    public var serialNumberHex: String {
        guard let serial = X509_get0_serialNumber(pointer), let number = ASN1_INTEGER_to_BN(serial, nil) else {
            return ""
        }
        defer { BN_free(number) }
        guard let hex = BN_bn2hex(number) else { return "" }
        defer { receipt_OPENSSL_free(hex) }
        return String(cString: hex)
    }

    /// Whether basicConstraints says `cA: TRUE`.
    public var isCertificateAuthority: Bool { X509_get_extension_flags(pointer) & UInt32(EXFLAG_CA) != 0 }

    /// Whether subject and issuer match and the certificate's own key verifies its signature.
    public var isSelfSigned: Bool { X509_self_signed(pointer, 1) == 1 }

    /// Whether `issuer` issued this certificate: it is named as the issuer, and the signature verifies with its key.
    public func isIssued(by issuer: Certificate) -> Bool {
        guard self.issuer == issuer.subject, let key = X509_get0_pubkey(issuer.pointer) else { return false }
        defer { clearOpenSSLErrors() }
        return X509_verify(pointer, key) == 1
    }

    /// Whether a keyUsage extension is present and lacks digitalSignature.
    public var keyUsageForbidsSigning: Bool {
        let usage = X509_get_key_usage(pointer)
        return usage != UInt32.max && usage & UInt32(KU_DIGITAL_SIGNATURE) == 0
    }

    /// Whether the certificate carries an extension with this identifier (critical or not).
    public func hasExtension(_ identifier: ASN1ObjectIdentifier) -> Bool {
        guard let object = OBJ_txt2obj(identifier.description, 1) else { return false }
        defer { ASN1_OBJECT_free(object) }
        return X509_get_ext_by_OBJ(pointer, object, -1) >= 0
    }

    /// The subject key identifier octets, if the extension is present.
    public var subjectKeyIdentifier: [UInt8]? {
        guard let identifier = X509_get0_subject_key_id(pointer), let data = ASN1_STRING_get0_data(identifier) else {
            return nil
        }
        return Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(identifier))))
    }

    /// The public key.
    public var publicKey: PublicKey {
        get throws(CryptoError) {
            guard let decodedPublicKey else { throw CryptoError(.unsupportedKey) }
            return decodedPublicKey
        }
    }

    /// SHA-256 of the DER encoding, in upper-case hex pairs separated by colons (``Hex``: verifying a receipt asks
    /// for its root's, `AppleCertificates.isAppleRoot`).
    public var sha256Fingerprint: String {
        Hex.encode(DigestAlgorithm.sha256.hash(derEncoded), uppercase: true, separator: UInt8(ascii: ":"))
    }

    /// Whether `encodedName` (a DER `Name`) names this certificate's issuer under RFC 5280's comparison rules, as
    /// OpenSSL's `X509_NAME_cmp` applies them (canonical form: case and spacing folded where the rules say so).
    public func issuerMatches(encodedName: ArraySlice<UInt8>) -> Bool {
        let bytes = Array(encodedName)
        guard let name = decodeWhole(bytes, with: { d2i_X509_NAME(nil, $0, $1) }, free: X509_NAME_free) else {
            return false
        }
        defer { X509_NAME_free(name) }
        return X509_NAME_cmp(name, X509_get_issuer_name(pointer)) == 0
    }

    /// The encoded issuer `Name` and the serial number's INTEGER content octets, read from the DER bytes:
    /// `TBSCertificate ::= SEQUENCE { [0] version OPTIONAL, serialNumber, signature, issuer, … }`.
    public func issuerAndSerialNumber() throws(DERError) -> (issuer: ArraySlice<UInt8>, serialNumber: ArraySlice<UInt8>)
    {
        if let decodedIssuerAndSerialNumber { return decodedIssuerAndSerialNumber }
        return try Self.readIssuerAndSerialNumber(derEncoded)
    }

    private static func readIssuerAndSerialNumber(
        _ der: [UInt8]
    ) throws(DERError) -> (issuer: ArraySlice<UInt8>, serialNumber: ArraySlice<UInt8>) {
        var certificate = try ASN1Node.parse(der, rules: .der).children()
        var tbs = try certificate.readSequence()
        _ = try tbs.readOptionalNode(.contextSpecific(0, constructed: true))
        let serial = try tbs.readIntegerBytes()
        _ = try tbs.readNode(expecting: .sequence)
        let issuer = try tbs.readNode(expecting: .sequence).encoded
        return (issuer, serial)
    }

    public var description: String { subject }

    public static func == (lhs: Certificate, rhs: Certificate) -> Bool { lhs.derEncoded == rhs.derEncoded }

    public func hash(into hasher: inout Hasher) { hasher.combine(derEncoded) }

    private static func text(of name: OpaquePointer?) -> String {
        guard let name, let bio = try? MemoryBIO() else { return "" }
        X509_NAME_print_ex(bio.pointer, name, 0, receipt_XN_FLAG_RFC2253() & ~UInt(ASN1_STRFLGS_ESC_MSB))
        return bio.text
    }

    /// `time` in seconds since 1970, 0 when OpenSSL cannot read it: its distance from 1970-01-01 in days and
    /// seconds, as OpenSSL counts it. (timegm(3) would first read the system's time zone, /etc/localtime, for a time
    /// that is UTC whatever the zone.)
    private static func seconds(_ time: UnsafePointer<ASN1_TIME>?) -> Int64 {
        var moment = tm()
        var epoch = tm()
        epoch.tm_year = 70
        epoch.tm_mday = 1
        var days: Int32 = 0
        var seconds: Int32 = 0
        guard let time, ASN1_TIME_to_tm(time, &moment) == 1, OPENSSL_gmtime_diff(&days, &seconds, &epoch, &moment) == 1
        else { return 0 }
        return Int64(days) * 86_400 + Int64(seconds)
    }
}
