import ReceiptDER

extension CMSSignedData {
    /// The DER encoding of a ContentInfo holding SignedData with one signer identified by issuer and serial
    /// number, attached content and no signed attributes: the layout of Apple's app receipts, where the signature
    /// is computed over the content octets themselves.
    ///
    /// Every length is computed first, so each header is written once and the content and certificates are copied
    /// once.
    ///
    /// - Parameters:
    ///   - certificates: whole DER certificates, written in the order given (leaf first).
    ///   - issuer: the signer certificate's encoded issuer `Name`.
    ///   - serialNumber: the signer certificate's serial number as INTEGER content octets.
    public static func encode(
        content: [UInt8],
        contentType: ASN1ObjectIdentifier = .cmsData,
        digestAlgorithm: CMSAlgorithmIdentifier,
        certificates: [[UInt8]],
        issuer: ArraySlice<UInt8>,
        serialNumber: ArraySlice<UInt8>,
        signatureAlgorithm: CMSAlgorithmIdentifier,
        signature: [UInt8]
    ) -> [UInt8] {
        func element(_ contentLength: Int) -> Int { DERWriter.encodedLength(contentLength: contentLength) }
        let version = element(1)
        let digest = element(digestAlgorithm.contentLength)
        let signatureAlgorithmLength = element(signatureAlgorithm.contentLength)
        let octets = element(content.count)
        let encapsulated = element(contentType.contentOctets.count) + element(octets)
        let certificateSet = certificates.reduce(0) { $0 + $1.count }
        let issuerAndSerial = issuer.count + element(serialNumber.count)
        let signerInfo =
            version + element(issuerAndSerial) + digest + signatureAlgorithmLength + element(signature.count)
        let signedData =
            version + element(digest) + element(encapsulated) + element(certificateSet) + element(element(signerInfo))
        let contentInfo = element(ASN1ObjectIdentifier.cmsSignedData.contentOctets.count) + element(element(signedData))

        var writer = DERWriter(capacity: element(contentInfo))
        writer.appendHeader(.sequence, length: contentInfo)
        writer.appendObjectIdentifier(.cmsSignedData)
        writer.appendHeader(.contextSpecific(0, constructed: true), length: element(signedData))
        writer.appendHeader(.sequence, length: signedData)
        writer.appendInteger(1)
        writer.appendHeader(.set, length: digest)
        digestAlgorithm.write(to: &writer)
        writer.appendHeader(.sequence, length: encapsulated)
        writer.appendObjectIdentifier(contentType)
        writer.appendHeader(.contextSpecific(0, constructed: true), length: octets)
        writer.appendOctetString(content)
        writer.appendHeader(.contextSpecific(0, constructed: true), length: certificateSet)
        for certificate in certificates { writer.appendEncoded(certificate) }
        writer.appendHeader(.set, length: element(signerInfo))
        writer.appendHeader(.sequence, length: signerInfo)
        writer.appendInteger(1)
        writer.appendHeader(.sequence, length: issuerAndSerial)
        writer.appendEncoded(issuer)
        writer.append(.integer, content: serialNumber)
        digestAlgorithm.write(to: &writer)
        signatureAlgorithm.write(to: &writer)
        writer.appendOctetString(signature)
        return writer.bytes
    }
}

extension CMSAlgorithmIdentifier {
    /// The content length of `SEQUENCE { algorithm, parameters }`.
    fileprivate var contentLength: Int {
        DERWriter.encodedLength(contentLength: algorithm.contentOctets.count) + (parameters?.count ?? 0)
    }

    fileprivate func write(to writer: inout DERWriter) {
        writer.appendHeader(.sequence, length: contentLength)
        writer.appendObjectIdentifier(algorithm)
        if let parameters { writer.appendEncoded(parameters) }
    }
}
