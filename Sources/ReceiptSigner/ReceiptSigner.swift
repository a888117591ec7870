import ReceiptCMS
import ReceiptCompression
import ReceiptCrypto
import ReceiptDER
import ReceiptModel

/// Turns receipts into signed app receipts in Apple's layout: a DER ContentInfo holding SignedData with the
/// payload attached, SHA-256, one signer identified by issuer and serial number, no signed attributes (the
/// signature covers the payload octets), and the certificates leaf first, then the chain.
public struct ReceiptSigner: Sendable {
    public let credentials: SigningCredentials
    // What every receipt this signer signs shares, worked out once.
    private let signatureAlgorithm: CMSAlgorithmIdentifier
    private let certificates: [[UInt8]]

    public init(credentials: SigningCredentials) {
        self.credentials = credentials
        signatureAlgorithm =
            switch credentials.key.algorithm {
            case .rsa: CMSAlgorithmIdentifier(.rsaEncryption, parameters: Self.null)
            default: CMSAlgorithmIdentifier(.ecdsaWithSHA256)
            }
        certificates = ([credentials.certificate] + credentials.chain).map(\.derEncoded)
    }

    /// The signed receipt in DER.
    ///
    /// With `compressed`, the payload is zlib-compressed into a CMS CompressedData (RFC 3274) and that is what is
    /// signed: a smaller receipt that this project's verifier reads, but Apple's tools and other receipt parsers do
    /// not. Without it, the receipt has Apple's layout.
    ///
    /// - Throws: ``SigningError/Code/invalidRequest`` when the receipt holds values that its payload cannot carry
    ///   faithfully (a negative quantity, a `sha1Hash` that is not 20 bytes, a date outside years 0000-9999, an
    ///   undocumented attribute that reuses a documented type): what is signed always verifies as given.
    public func sign(_ receipt: Receipt, compressed: Bool = false) throws(SigningError) -> [UInt8] {
        guard receipt.encodesFaithfully else {
            throw SigningError(
                .invalidRequest,
                "the receipt cannot be encoded faithfully: a negative quantity, a sha1_hash that is not 20 bytes, "
                    + "a date outside years 0000-9999, or an undocumented attribute reusing a documented type")
        }
        let payload = receipt.payloadDER
        var content = payload
        if compressed {
            guard let deflated = Zlib.deflate(payload) else {
                throw SigningError(.signingFailed, "zlib could not compress")
            }
            content = CMSCompressedData.encode(zlibCompressed: deflated)
        }
        let signature: [UInt8]
        do {
            signature = try credentials.key.signature(forDigest: DigestAlgorithm.sha256.hash(content), digest: .sha256)
        } catch {
            throw SigningError(.signingFailed, "\(error)")
        }
        let issuerAndSerial: (issuer: ArraySlice<UInt8>, serialNumber: ArraySlice<UInt8>)
        do {
            issuerAndSerial = try credentials.certificate.issuerAndSerialNumber()
        } catch {
            throw SigningError(.invalidCertificate, "signer certificate is not DER: \(error)")
        }
        return CMSSignedData.encode(
            content: content,
            contentType: compressed ? .cmsCompressedData : .cmsData,
            digestAlgorithm: CMSAlgorithmIdentifier(.sha256, parameters: Self.null),
            certificates: certificates,
            issuer: issuerAndSerial.issuer,
            serialNumber: issuerAndSerial.serialNumber,
            signatureAlgorithm: signatureAlgorithm,
            signature: signature)
    }

    /// The signed receipt in DER, bound to `device`: a fresh random opaque value (field 4) and
    /// SHA-1(device ‖ opaque value ‖ bundle id) as field 5.
    public func sign(
        _ receipt: Receipt,
        boundTo device: DeviceIdentifier,
        compressed: Bool = false
    ) throws(SigningError) -> [UInt8] {
        var bound = receipt
        do {
            bound.opaqueValue = try secureRandomBytes(16)
        } catch {
            throw SigningError(.signingFailed, "\(error)")
        }
        bound.sha1Hash = bound.deviceBindingInput(for: device).map { DigestAlgorithm.sha1.hash($0) }
        return try sign(bound, compressed: compressed)
    }

    private static let null: ArraySlice<UInt8> = [0x05, 0x00]
}
