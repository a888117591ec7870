import ReceiptDER

extension ASN1ObjectIdentifier {
    /// id-ct-compressedData, 1.2.840.113549.1.9.16.1.9 (RFC 3274)
    public static let cmsCompressedData = ASN1ObjectIdentifier(arcs: 1, 2, 840, 113_549, 1, 9, 16, 1, 9)
    /// id-alg-zlibCompress, 1.2.840.113549.1.9.16.3.8 (RFC 3274)
    public static let zlibCompression = ASN1ObjectIdentifier(arcs: 1, 2, 840, 113_549, 1, 9, 16, 3, 8)
}

/// CMS CompressedData (RFC 3274), read from strict DER (it is signed content) and written as DER:
/// ```
/// CompressedData ::= SEQUENCE {
///   version CMSVersion, -- always 0
///   compressionAlgorithm CompressionAlgorithmIdentifier,
///   encapContentInfo EncapsulatedContentInfo }
/// ```
/// This type only carries the compressed octets; inflating them is the caller's, under its own limits.
public struct CMSCompressedData: Sendable {
    public let compressionAlgorithm: CMSAlgorithmIdentifier
    public let contentType: ASN1ObjectIdentifier
    public let compressedContent: ArraySlice<UInt8>

    /// Reads a CompressedData that fills `bytes` exactly.
    public init(derEncoded bytes: ArraySlice<UInt8>) throws(CMSError) {
        var location = "CompressedData"
        do {
            var sequence = try ASN1Node.parse(bytes, rules: .der).children()
            location = "CompressedData.version"
            let version: Int = try sequence.readInteger()
            guard version == 0 else { throw CMSError(.invalid("version is \(version), not 0"), at: location) }
            location = "CompressedData.compressionAlgorithm"
            var algorithm = try sequence.readSequence()
            let identifier = try algorithm.readObjectIdentifier()
            let parameters = algorithm.isAtEnd ? nil : try algorithm.readNode().encoded
            try algorithm.finish()
            compressionAlgorithm = CMSAlgorithmIdentifier(identifier, parameters: parameters)
            location = "CompressedData.encapContentInfo"
            var encapsulated = try sequence.readSequence()
            contentType = try encapsulated.readObjectIdentifier()
            var wrapper = try encapsulated.readNode(expecting: .contextSpecific(0, constructed: true)).children()
            compressedContent = try wrapper.readOctetString()
            try wrapper.finish()
            try encapsulated.finish()
            location = "CompressedData"
            try sequence.finish()
        } catch let error as CMSError {
            throw error
        } catch let error as DERError {
            throw CMSError(.malformed(error), at: location)
        } catch {
            throw CMSError(.invalid("\(error)"), at: location)
        }
    }

    /// The DER of a CompressedData holding `compressed` (zlib output) of content type `data`.
    public static func encode(zlibCompressed compressed: [UInt8]) -> [UInt8] {
        var writer = DERWriter()
        writer.appendSequence { sequence in
            sequence.appendInteger(0)
            sequence.appendSequence { $0.appendObjectIdentifier(.zlibCompression) }
            sequence.appendSequence { encapsulated in
                encapsulated.appendObjectIdentifier(.cmsData)
                encapsulated.appendConstructed(.contextSpecific(0, constructed: true)) {
                    $0.appendOctetString(compressed)
                }
            }
        }
        return writer.bytes
    }
}
