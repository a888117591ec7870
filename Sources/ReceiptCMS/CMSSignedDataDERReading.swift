import ReceiptDER

extension CMSSignedData {
    /// The deepest element the reading below looks at is at depth 6 (ContentInfo, `[0]`, SignedData, signerInfos,
    /// SignerInfo, IssuerAndSerialNumber, issuer), so under a smaller limit it leaves the decision to the node reader.
    private static var fastPathMinimumDepth: Int { 8 }

    /// What ``init(berEncoded:maximumDepth:)`` reads, read in one pass over the bytes without building nodes, for
    /// the envelope every app receipt has: each element read is strict DER, strings are primitive and there are no
    /// signed attributes. Returns nil for anything else (including every error), and the node reader then decides,
    /// so the two give the same answer on every input: on strict DER the node reader sees the same elements, and
    /// this reading makes every check it makes.
    init?(strictDER bytes: ArraySlice<UInt8>, maximumDepth: Int) {
        guard maximumDepth >= Self.fastPathMinimumDepth else { return nil }
        let span = bytes.span
        func slice(_ start: Int, _ end: Int) -> ArraySlice<UInt8> {
            bytes[(bytes.startIndex + start)..<(bytes.startIndex + end)]
        }
        do throws(DERError) {
            var whole = Cursor(start: 0, end: span.count)
            var contentInfo = try whole.enter(span, .sequence)
            try whole.finish()
            guard try contentInfo.objectIdentifier(span, slice) == .cmsSignedData else { return nil }
            var explicit = try contentInfo.enter(span, .contextSpecific(0, constructed: true))
            try contentInfo.finish()
            var signedData = try explicit.enter(span, .sequence)
            try explicit.finish()

            version = try signedData.integer(span)
            var digestSet = try signedData.enter(span, .set)
            var digests: [CMSAlgorithmIdentifier] = []
            while !digestSet.isAtEnd { digests.append(try Self.algorithm(&digestSet, span, slice)) }
            digestAlgorithms = digests

            var encapsulated = try signedData.enter(span, .sequence)
            contentType = try encapsulated.objectIdentifier(span, slice)
            if var wrapper = try encapsulated.enterIfPresent(span, .contextSpecific(0, constructed: true)) {
                let octets = try wrapper.read(span, .octetString)
                try wrapper.finish()
                content = slice(octets.contentStart, octets.end)
            } else {
                content = nil
            }
            try encapsulated.finish()

            var certificateList: [ArraySlice<UInt8>] = []
            if var choices = try signedData.enterIfPresent(span, .contextSpecific(0, constructed: true)) {
                certificateList.reserveCapacity(try choices.count(span, .sequence))
                while !choices.isAtEnd {
                    let certificate = try choices.read(span, .sequence)
                    certificateList.append(slice(certificate.start, certificate.end))
                }
            }
            certificates = certificateList
            _ = try signedData.readIfPresent(span, .contextSpecific(1, constructed: true))

            var signerSet = try signedData.enter(span, .set)
            var signers: [CMSSignerInfo] = []
            while !signerSet.isAtEnd {
                guard let signer = try Self.signerInfo(&signerSet, span, maximumDepth: maximumDepth, slice) else {
                    return nil
                }
                signers.append(signer)
            }
            signerInfos = signers
            try signedData.finish()
            hasIndefiniteLengthEnvelope = false
        } catch {
            return nil
        }
    }

    /// A SignerInfo without signed attributes and with a primitive key identifier, or nil.
    private static func signerInfo(
        _ cursor: inout Cursor,
        _ span: Span<UInt8>,
        maximumDepth: Int,
        _ slice: (Int, Int) -> ArraySlice<UInt8>
    ) throws(DERError) -> CMSSignerInfo? {
        var signer = try cursor.enter(span, .sequence)
        let version = try signer.integer(span)
        let identifier: CMSSignerIdentifier
        let keyIdentifierTag = ASN1Tag.contextSpecific(0, constructed: false)
        if let keyIdentifier = try signer.readIfPresent(span, keyIdentifierTag) {
            identifier = .subjectKeyIdentifier(slice(keyIdentifier.contentStart, keyIdentifier.end))
        } else {
            guard try signer.readIfPresent(span, keyIdentifierTag.toggledForm) == nil else { return nil }
            var issuerAndSerial = try signer.enter(span, .sequence)
            let issuer = try issuerAndSerial.read(span, .sequence)
            guard DERSpanReader.isStrictDER(in: span, from: issuer.start, to: issuer.end, maximumDepth: maximumDepth)
            else { return nil }
            let serial = try issuerAndSerial.read(span, .integer)
            guard DERSpanReader.isMinimalInteger(in: span, serial) else { return nil }
            try issuerAndSerial.finish()
            identifier = .issuerAndSerialNumber(
                issuer: slice(issuer.start, issuer.end), serialNumber: slice(serial.contentStart, serial.end))
        }
        let digestAlgorithm = try algorithm(&signer, span, slice)
        guard try signer.readIfPresent(span, .contextSpecific(0, constructed: true)) == nil else { return nil }
        let signatureAlgorithm = try algorithm(&signer, span, slice)
        let signature = try signer.read(span, .octetString)
        _ = try signer.readIfPresent(span, .contextSpecific(1, constructed: true))
        try signer.finish()
        return CMSSignerInfo(
            version: version, signerIdentifier: identifier, digestAlgorithm: digestAlgorithm, signedAttributes: nil,
            signatureAlgorithm: signatureAlgorithm, signature: slice(signature.contentStart, signature.end))
    }

    /// `AlgorithmIdentifier ::= SEQUENCE { algorithm OBJECT IDENTIFIER, parameters ANY OPTIONAL }`
    private static func algorithm(
        _ cursor: inout Cursor,
        _ span: Span<UInt8>,
        _ slice: (Int, Int) -> ArraySlice<UInt8>
    ) throws(DERError) -> CMSAlgorithmIdentifier {
        var sequence = try cursor.enter(span, .sequence)
        let algorithm = try sequence.objectIdentifier(span, slice)
        var parameters: ArraySlice<UInt8>?
        if !sequence.isAtEnd {
            let element = try sequence.read(span, nil)
            parameters = slice(element.start, element.end)
        }
        try sequence.finish()
        return CMSAlgorithmIdentifier(algorithm, parameters: parameters)
    }
}

/// The elements from `position` up to `end`, read one after the other as strict DER. Every error only means "not
/// the common case", so errors carry no more than DERSpanReader's.
private struct Cursor {
    var position: Int
    let end: Int

    init(start: Int, end: Int) {
        position = start
        self.end = end
    }

    var isAtEnd: Bool { position == end }

    /// The next element, which must have `tag` (any tag when nil).
    mutating func read(_ span: Span<UInt8>, _ tag: ASN1Tag?) throws(DERError) -> DERSpanReader.Element {
        let element =
            if let tag {
                try DERSpanReader.element(in: span, at: position, limit: end, expecting: tag)
            } else {
                try DERSpanReader.element(in: span, at: position, limit: end)
            }
        position = element.end
        return element
    }

    /// The next element if it starts with the identifier octet of `tag` (a tag number below 31); nothing is
    /// consumed otherwise. Whatever else is there is left to the next read, which fails on what is not strict DER.
    mutating func readIfPresent(_ span: Span<UInt8>, _ tag: ASN1Tag) throws(DERError) -> DERSpanReader.Element? {
        guard !isAtEnd, let identifier = tag.singleOctetIdentifier, span[position] == identifier else { return nil }
        return try read(span, tag)
    }

    /// A cursor over the content of the next element, which must have `tag`.
    mutating func enter(_ span: Span<UInt8>, _ tag: ASN1Tag) throws(DERError) -> Cursor {
        let element = try read(span, tag)
        return Cursor(start: element.contentStart, end: element.end)
    }

    /// A cursor over the content of the next element if it has `tag`.
    mutating func enterIfPresent(_ span: Span<UInt8>, _ tag: ASN1Tag) throws(DERError) -> Cursor? {
        try readIfPresent(span, tag).map { Cursor(start: $0.contentStart, end: $0.end) }
    }

    mutating func integer(_ span: Span<UInt8>) throws(DERError) -> Int {
        Int(try DERSpanReader.int64(in: span, try read(span, .integer)))
    }

    mutating func objectIdentifier(_ span: Span<UInt8>, _ slice: (Int, Int) -> ArraySlice<UInt8>)
        throws(DERError) -> ASN1ObjectIdentifier
    {
        let element = try read(span, .objectIdentifier)
        guard let identifier = ASN1ObjectIdentifier(contentOctets: slice(element.contentStart, element.end)) else {
            throw DERError(.invalidObjectIdentifier, at: element.start)
        }
        return identifier
    }

    /// How many elements are left, each of which must have `tag` (nothing is consumed).
    func count(_ span: Span<UInt8>, _ tag: ASN1Tag) throws(DERError) -> Int {
        var rest = self
        var count = 0
        while !rest.isAtEnd {
            _ = try rest.read(span, tag)
            count += 1
        }
        return count
    }

    func finish() throws(DERError) {
        guard isAtEnd else { throw DERError(.trailingData, at: position) }
    }
}
