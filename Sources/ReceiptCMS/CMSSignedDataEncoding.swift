import ReceiptDER

extension CMSSignedData {
    /// The DER encoding of a ContentInfo holding SignedData with one signer identified by issuer and serial
    /// number, attached content and no signed attributes: the layout of Apple's app receipts, where the signature
    /// is computed over the content octets themselves.
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
        var writer = DERWriter()
        writer.appendSequence { contentInfo in
            contentInfo.appendObjectIdentifier(.cmsSignedData)
            contentInfo.appendConstructed(.contextSpecific(0, constructed: true)) { explicit in
                explicit.appendSequence { signedData in
                    signedData.appendInteger(1)
                    signedData.appendSetOf([encode(digestAlgorithm)])
                    signedData.appendSequence { encapsulated in
                        encapsulated.appendObjectIdentifier(contentType)
                        encapsulated.appendConstructed(.contextSpecific(0, constructed: true)) { eContent in
                            eContent.appendOctetString(content)
                        }
                    }
                    signedData.append(.contextSpecific(0, constructed: true), contentsOf: certificates)
                    signedData.appendConstructed(.set) { signerInfos in
                        signerInfos.appendSequence { signer in
                            signer.appendInteger(1)
                            signer.appendSequence { issuerAndSerialNumber in
                                issuerAndSerialNumber.appendEncoded(issuer)
                                issuerAndSerialNumber.appendInteger(twosComplement: serialNumber)
                            }
                            signer.appendEncoded(encode(digestAlgorithm))
                            signer.appendEncoded(encode(signatureAlgorithm))
                            signer.appendOctetString(signature)
                        }
                    }
                }
            }
        }
        return writer.bytes
    }

    private static func encode(_ algorithm: CMSAlgorithmIdentifier) -> [UInt8] {
        var writer = DERWriter()
        writer.appendSequence { sequence in
            sequence.appendObjectIdentifier(algorithm.algorithm)
            if let parameters = algorithm.parameters { sequence.appendEncoded(parameters) }
        }
        return writer.bytes
    }
}
