import ReceiptDER

/// `AlgorithmIdentifier ::= SEQUENCE { algorithm OBJECT IDENTIFIER, parameters ANY OPTIONAL }`
public struct CMSAlgorithmIdentifier: Hashable, Sendable {
    public let algorithm: ASN1ObjectIdentifier
    /// The encoded parameters element, if any (usually NULL or absent).
    public let parameters: ArraySlice<UInt8>?

    public init(_ algorithm: ASN1ObjectIdentifier, parameters: ArraySlice<UInt8>? = nil) {
        self.algorithm = algorithm
        self.parameters = parameters
    }
}

/// `SignerIdentifier ::= CHOICE { issuerAndSerialNumber IssuerAndSerialNumber, subjectKeyIdentifier [0] … }`
public enum CMSSignerIdentifier: Hashable, Sendable {
    /// The issuer's `Name` (whole TLV, with any BER lengths made definite) and the serial number's INTEGER content
    /// octets.
    case issuerAndSerialNumber(issuer: ArraySlice<UInt8>, serialNumber: ArraySlice<UInt8>)
    /// The signer certificate's subject key identifier octets.
    case subjectKeyIdentifier(ArraySlice<UInt8>)
}

/// `Attribute ::= SEQUENCE { attrType OBJECT IDENTIFIER, attrValues SET OF AttributeValue }`
public struct CMSAttribute: Hashable, Sendable {
    public let type: ASN1ObjectIdentifier
    /// Each value's whole encoding.
    public let values: [ArraySlice<UInt8>]
}

/// `signedAttrs [0] IMPLICIT SET OF Attribute`, with the exact bytes the signature covers.
public struct CMSSignedAttributes: Hashable, Sendable {
    public let attributes: [CMSAttribute]
    /// The DER encoding with the universal SET tag, which is what is signed (RFC 5652 §5.4).
    public let signedBytes: [UInt8]
}

/// ```
/// SignerInfo ::= SEQUENCE {
///   version CMSVersion, sid SignerIdentifier, digestAlgorithm DigestAlgorithmIdentifier,
///   signedAttrs [0] IMPLICIT SignedAttributes OPTIONAL, signatureAlgorithm SignatureAlgorithmIdentifier,
///   signature SignatureValue, unsignedAttrs [1] IMPLICIT UnsignedAttributes OPTIONAL }
/// ```
public struct CMSSignerInfo: Hashable, Sendable {
    public let version: Int
    public let signerIdentifier: CMSSignerIdentifier
    public let digestAlgorithm: CMSAlgorithmIdentifier
    public let signedAttributes: CMSSignedAttributes?
    public let signatureAlgorithm: CMSAlgorithmIdentifier
    public let signature: ArraySlice<UInt8>
}

/// A CMS `ContentInfo` holding `SignedData` (RFC 5652 §5.1), read from BER without copying:
/// ```
/// ContentInfo ::= SEQUENCE { contentType OBJECT IDENTIFIER, content [0] EXPLICIT ANY DEFINED BY contentType }
/// SignedData ::= SEQUENCE {
///   version CMSVersion, digestAlgorithms SET OF DigestAlgorithmIdentifier,
///   encapContentInfo EncapsulatedContentInfo, certificates [0] IMPLICIT CertificateSet OPTIONAL,
///   crls [1] IMPLICIT RevocationInfoChoices OPTIONAL, signerInfos SET OF SignerInfo }
/// EncapsulatedContentInfo ::= SEQUENCE { eContentType OBJECT IDENTIFIER, eContent [0] EXPLICIT OCTET STRING OPTIONAL }
/// ```
public struct CMSSignedData: Hashable, Sendable {
    public let version: Int
    public let digestAlgorithms: [CMSAlgorithmIdentifier]
    public let contentType: ASN1ObjectIdentifier
    /// The eContent octets (joined when BER split them into chunks), or nil when detached.
    public let content: ArraySlice<UInt8>?
    /// Each certificate's whole encoding, in the order given.
    public let certificates: [ArraySlice<UInt8>]
    public let signerInfos: [CMSSignerInfo]
    /// Whether the outermost ContentInfo uses BER's indefinite length form (as Xcode's receipts do).
    public let hasIndefiniteLengthEnvelope: Bool

    /// Reads one ContentInfo that must fill `bytes` entirely.
    public init(berEncoded bytes: ArraySlice<UInt8>, maximumDepth: Int = ASN1Reader.defaultMaximumDepth)
        throws(CMSError)
    {
        if let common = CMSSignedData(strictDER: bytes, maximumDepth: maximumDepth) {
            self = common
        } else {
            try self.init(readingNodes: bytes, maximumDepth: maximumDepth)
        }
    }

    /// ``init(berEncoded:maximumDepth:)`` through ASN.1 nodes, for every shape BER allows.
    init(readingNodes bytes: ArraySlice<UInt8>, maximumDepth: Int) throws(CMSError) {
        var location = CMSLocation.contentInfo
        do {
            let contentInfoNode = try ASN1Node.parse(bytes, rules: .ber, maximumDepth: maximumDepth)
            guard contentInfoNode.tag == .sequence else {
                throw DERError(
                    .unexpectedTag(expected: .sequence, found: contentInfoNode.tag), at: contentInfoNode.offset)
            }
            hasIndefiniteLengthEnvelope = contentInfoNode.isIndefiniteLength
            var contentInfo = try contentInfoNode.children()
            let type = try contentInfo.readObjectIdentifier()
            guard type == .cmsSignedData else { throw CMSError(.notSignedData(type), at: location.description) }
            var explicit = try contentInfo.readNode(expecting: .contextSpecific(0, constructed: true)).children()
            try contentInfo.finish()
            location = .field("SignedData")
            var signedData = try explicit.readSequence()
            try explicit.finish()

            location = .field("SignedData.version")
            version = try signedData.readInteger()
            location = .field("SignedData.digestAlgorithms")
            var digestSet = try signedData.readSet()
            var digests: [CMSAlgorithmIdentifier] = []
            while !digestSet.isAtEnd { digests.append(try Self.readAlgorithm(&digestSet)) }
            digestAlgorithms = digests

            location = .field("SignedData.encapContentInfo")
            var encapsulated = try signedData.readSequence()
            contentType = try encapsulated.readObjectIdentifier()
            if let wrapper = try encapsulated.readOptionalNode(.contextSpecific(0, constructed: true)) {
                var octets = try wrapper.children()
                content = try octets.readOctetString()
                try octets.finish()
            } else {
                content = nil
            }
            try encapsulated.finish()

            location = .field("SignedData.certificates")
            var certificateList: [ArraySlice<UInt8>] = []
            if let certificateSet = try signedData.readOptionalNode(.contextSpecific(0, constructed: true)) {
                var choices = try certificateSet.children()
                while !choices.isAtEnd {
                    location = .element("SignedData.certificates", certificateList.count)
                    let certificate = try choices.readNode()
                    guard certificate.tag == .sequence else {
                        throw CMSError(
                            .unsupported("a certificate choice other than X.509 (\(certificate.tag))"),
                            at: location.description)
                    }
                    guard !certificate.isIndefiniteLength else {
                        throw CMSError(
                            .unsupported("a certificate with indefinite lengths"), at: location.description)
                    }
                    certificateList.append(certificate.encoded)
                }
            }
            certificates = certificateList
            location = .field("SignedData.crls")
            _ = try signedData.readOptionalNode(.contextSpecific(1, constructed: true))

            location = .field("SignedData.signerInfos")
            var signerSet = try signedData.readSet()
            var signers: [CMSSignerInfo] = []
            while !signerSet.isAtEnd {
                location = .element("SignedData.signerInfos", signers.count)
                signers.append(try Self.readSignerInfo(&signerSet, location: location))
            }
            signerInfos = signers
            location = .field("SignedData")
            try signedData.finish()
        } catch let error as CMSError {
            throw error
        } catch let error as DERError {
            throw CMSError(.malformed(error), at: location.description)
        } catch {
            throw CMSError(.invalid("\(error)"), at: location.description)
        }
    }

    private static func readAlgorithm(_ reader: inout ASN1Reader) throws(DERError) -> CMSAlgorithmIdentifier {
        var sequence = try reader.readSequence()
        let algorithm = try sequence.readObjectIdentifier()
        let parameters = sequence.isAtEnd ? nil : try sequence.readNode().encoded
        try sequence.finish()
        return CMSAlgorithmIdentifier(algorithm, parameters: parameters)
    }

    private static func readSignerInfo(_ reader: inout ASN1Reader, location: CMSLocation) throws -> CMSSignerInfo {
        var signer = try reader.readSequence()
        let version: Int = try signer.readInteger()
        let identifier: CMSSignerIdentifier
        let keyIdentifierTag = ASN1Tag.contextSpecific(0, constructed: false)
        if let keyIdentifier = try signer.readOptionalNode(keyIdentifierTag)
            ?? signer.readOptionalNode(keyIdentifierTag.toggledForm)
        {
            identifier = .subjectKeyIdentifier(try keyIdentifier.octetStringBytes(implicitTag: keyIdentifierTag))
        } else {
            var issuerAndSerial = try signer.readSequence()
            let issuer = try issuerAndSerial.readNode(expecting: .sequence).definiteLengthEncoding()
            let serial = try issuerAndSerial.readIntegerBytes()
            try issuerAndSerial.finish()
            identifier = .issuerAndSerialNumber(issuer: issuer, serialNumber: serial)
        }
        let digestAlgorithm = try readAlgorithm(&signer)
        var signedAttributes: CMSSignedAttributes?
        if let node = try signer.readOptionalNode(.contextSpecific(0, constructed: true)) {
            signedAttributes = try readSignedAttributes(node, location: location)
        }
        let signatureAlgorithm = try readAlgorithm(&signer)
        let signature = try signer.readOctetString()
        _ = try signer.readOptionalNode(.contextSpecific(1, constructed: true))
        try signer.finish()
        return CMSSignerInfo(
            version: version, signerIdentifier: identifier, digestAlgorithm: digestAlgorithm,
            signedAttributes: signedAttributes, signatureAlgorithm: signatureAlgorithm, signature: signature)
    }

    /// Signed attributes must be DER (RFC 5652 §5.3); they are re-read under DER from their SET-tagged form.
    /// Signed attributes of the signer at `location`.
    private static func readSignedAttributes(_ node: ASN1Node, location: CMSLocation) throws -> CMSSignedAttributes {
        let location = location.description + ".signedAttrs"
        guard !node.isIndefiniteLength else {
            throw CMSError(.invalid("signed attributes must be DER (definite lengths)"), at: location)
        }
        let signedBytes = [0x31] + node.encoded.dropFirst()
        var attributes: [CMSAttribute] = []
        var seen = Set<ASN1ObjectIdentifier>()
        var set = try ASN1Node.parse(signedBytes, rules: .der).children()
        while !set.isAtEnd {
            var attribute = try set.readSequence()
            let type = try attribute.readObjectIdentifier()
            var valueSet = try attribute.readSet()
            try attribute.finish()
            var values: [ArraySlice<UInt8>] = []
            while !valueSet.isAtEnd { values.append(try valueSet.readNode().encoded) }
            guard seen.insert(type).inserted else {
                throw CMSError(.invalid("attribute \(type) appears more than once"), at: location)
            }
            attributes.append(CMSAttribute(type: type, values: values))
        }
        return CMSSignedAttributes(attributes: attributes, signedBytes: signedBytes)
    }

}

/// Where in the structure a reader is, turned into text only when an error is reported.
private enum CMSLocation: CustomStringConvertible {
    case contentInfo
    case field(StaticString)
    case element(StaticString, Int)

    var description: String {
        switch self {
        case .contentInfo: "ContentInfo"
        case .field(let name): "\(name)"
        case .element(let name, let index): "\(name)[\(index)]"
        }
    }
}
