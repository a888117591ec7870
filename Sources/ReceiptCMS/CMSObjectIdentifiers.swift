import ReceiptDER

/// The object identifiers of CMS (RFC 5652) and of the algorithms receipts use.
extension ASN1ObjectIdentifier {
    /// id-data, 1.2.840.113549.1.7.1
    public static let cmsData = ASN1ObjectIdentifier(arcs: 1, 2, 840, 113_549, 1, 7, 1)
    /// id-signedData, 1.2.840.113549.1.7.2
    public static let cmsSignedData = ASN1ObjectIdentifier(arcs: 1, 2, 840, 113_549, 1, 7, 2)
    /// id-contentType (signed attribute), 1.2.840.113549.1.9.3
    public static let cmsContentTypeAttribute = ASN1ObjectIdentifier(arcs: 1, 2, 840, 113_549, 1, 9, 3)
    /// id-messageDigest (signed attribute), 1.2.840.113549.1.9.4
    public static let cmsMessageDigestAttribute = ASN1ObjectIdentifier(arcs: 1, 2, 840, 113_549, 1, 9, 4)

    /// id-sha1, 1.3.14.3.2.26
    public static let sha1 = ASN1ObjectIdentifier(arcs: 1, 3, 14, 3, 2, 26)
    /// id-sha256, 2.16.840.1.101.3.4.2.1
    public static let sha256 = ASN1ObjectIdentifier(arcs: 2, 16, 840, 1, 101, 3, 4, 2, 1)

    /// rsaEncryption, 1.2.840.113549.1.1.1 (what Apple puts in SignerInfo.signatureAlgorithm)
    public static let rsaEncryption = ASN1ObjectIdentifier(arcs: 1, 2, 840, 113_549, 1, 1, 1)
    /// sha1WithRSAEncryption, 1.2.840.113549.1.1.5
    public static let sha1WithRSAEncryption = ASN1ObjectIdentifier(arcs: 1, 2, 840, 113_549, 1, 1, 5)
    /// sha256WithRSAEncryption, 1.2.840.113549.1.1.11
    public static let sha256WithRSAEncryption = ASN1ObjectIdentifier(arcs: 1, 2, 840, 113_549, 1, 1, 11)
    /// ecdsa-with-SHA1, 1.2.840.10045.4.1
    public static let ecdsaWithSHA1 = ASN1ObjectIdentifier(arcs: 1, 2, 840, 10045, 4, 1)
    /// ecdsa-with-SHA256, 1.2.840.10045.4.3.2
    public static let ecdsaWithSHA256 = ASN1ObjectIdentifier(arcs: 1, 2, 840, 10045, 4, 3, 2)
}
