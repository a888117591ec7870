import ReceiptDER

/// What singles out Apple's signing chains: the marker extensions on its leaf and intermediate certificates, and
/// the fingerprints of its public roots.
public enum AppleCertificates {
    /// On the leaf that signs receipts and StoreKit 2 data: 1.2.840.113635.100.6.11.1.
    public static let signingLeafMarker = ASN1ObjectIdentifier(arcs: 1, 2, 840, 113_635, 100, 6, 11, 1)
    /// On Apple's WWDR intermediates: 1.2.840.113635.100.6.2.1.
    public static let intermediateMarker = ASN1ObjectIdentifier(arcs: 1, 2, 840, 113_635, 100, 6, 2, 1)

    /// SHA-256 fingerprints of Apple's public roots: Apple Inc. Root, Apple Root CA - G2 and - G3.
    public static let rootFingerprints: Set<String> = [
        "B0:B1:73:0E:CB:C7:FF:45:05:14:2C:49:F1:29:5E:6E:DA:6B:CA:ED:7E:2C:68:C5:BE:91:B5:A1:10:01:F0:24",
        "C2:B9:B0:42:DD:57:83:0E:7D:11:7D:AC:55:AC:8A:E1:94:07:D3:8E:41:D8:8F:32:15:BC:3A:89:04:44:A0:50",
        "63:34:3A:BF:B8:9A:6A:03:EB:B5:7E:9B:3F:5F:A7:BE:7C:4F:5C:75:6F:30:17:B3:A8:C4:88:C3:65:3E:91:79",
    ]

    /// Whether `certificate` is one of Apple's public roots.
    public static func isAppleRoot(_ certificate: Certificate) -> Bool {
        rootFingerprints.contains(certificate.sha256Fingerprint)
    }

    /// Why `chain` (leaf first, ending at its anchor) is not shaped like Apple's signing chains, or nil when it
    /// is: one intermediate between leaf and root, `leafMarker` on the leaf and `intermediateMarker` on the
    /// intermediate. Under Apple's roots every developer certificate chains to the root; only these single out
    /// the App Store's own signers.
    public static func markerViolation(
        in chain: [Certificate],
        leafMarker: ASN1ObjectIdentifier = signingLeafMarker,
        intermediateMarker: ASN1ObjectIdentifier = intermediateMarker
    ) -> String? {
        guard chain.count == 3 else {
            return "the leaf must chain to the root through exactly one intermediate; this chain has "
                + "\(chain.count) certificates"
        }
        guard chain[0].hasExtension(leafMarker) else {
            return "leaf certificate (\(chain[0].subject)) lacks Apple's signing marker \(leafMarker)"
        }
        guard chain[1].hasExtension(intermediateMarker) else {
            return
                "intermediate certificate (\(chain[1].subject)) lacks Apple's intermediate marker \(intermediateMarker)"
        }
        return nil
    }
}
