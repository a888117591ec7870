import ReceiptDER

/// The two encodings of an ECDSA P-256 signature: JWS's fixed 64 bytes `r ‖ s` (RFC 7518 §3.4: each value 32 bytes,
/// big-endian, left-padded with zeros) and the DER `ECDSA-Sig-Value` that OpenSSL reads and writes:
///
/// ```
/// ECDSA-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER }
/// ```
public enum ES256Signature {
    /// Bytes in each of `r` and `s`: the size of the P-256 group order.
    public static let componentLength = 32
    /// Bytes in a JWS ES256 signature.
    public static let rawLength = 2 * componentLength

    /// The DER `ECDSA-Sig-Value` of a 64-byte `r ‖ s` signature.
    ///
    /// - Throws: ``JWSError/Code/invalidSignature`` when `raw` is not exactly 64 bytes.
    public static func der(fromRaw raw: some Collection<UInt8>) throws(JWSError) -> [UInt8] {
        let bytes = Array(raw)
        guard bytes.count == rawLength else {
            throw JWSError(
                .invalidSignature,
                "signature is \(bytes.count) bytes; ES256 signatures are exactly \(rawLength) bytes (r ‖ s)")
        }
        var writer = DERWriter(capacity: rawLength + 9)
        writer.appendSequence { sequence in
            // A leading zero makes each value non-negative; the writer trims it and any other redundant octets.
            sequence.appendInteger(twosComplement: [0] + bytes[..<componentLength])
            sequence.appendInteger(twosComplement: [0] + bytes[componentLength...])
        }
        return writer.bytes
    }

    /// The 64-byte `r ‖ s` form of a DER `ECDSA-Sig-Value`, which must be strict DER (minimal lengths and
    /// integers, nothing after the sequence) with `r` and `s` positive and below 2^256.
    ///
    /// - Throws: ``JWSError/Code/invalidSignature`` for anything else.
    public static func raw(fromDER der: some Collection<UInt8>) throws(JWSError) -> [UInt8] {
        let bytes = Array(der)
        do throws(DERError) {
            var outer = ASN1Reader(bytes[...], rules: .der)
            var sequence = try outer.readSequence()
            try outer.finish()
            let r = try component(try sequence.readIntegerBytes(), name: "r")
            let s = try component(try sequence.readIntegerBytes(), name: "s")
            try sequence.finish()
            return r + s
        } catch {
            throw JWSError(.invalidSignature, "DER ECDSA-Sig-Value: \(error)")
        }
    }

    /// A positive INTEGER's content octets as exactly 32 big-endian bytes.
    private static func component(_ octets: ArraySlice<UInt8>, name: String) throws(DERError) -> [UInt8] {
        // `readIntegerBytes` has checked that the octets are non-empty and minimal.
        guard let first = octets.first, first & 0x80 == 0 else {
            throw DERError(.integerOutOfRange, at: octets.startIndex)
        }
        let magnitude = first == 0 ? octets.dropFirst() : octets
        guard !magnitude.isEmpty, magnitude.count <= componentLength else {
            throw DERError(.integerOutOfRange, at: octets.startIndex)
        }
        return [UInt8](repeating: 0, count: componentLength - magnitude.count) + magnitude
    }
}
