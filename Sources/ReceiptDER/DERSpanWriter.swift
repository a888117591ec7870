/// Writes DER into an `OutputSpan<UInt8>` whose size the caller measured first (with
/// ``DERWriter/encodedLength(contentLength:)``, ``DERWriter/lengthOctetCount(_:)`` and
/// ``DERWriter/integerContentLength(_:)``): every octet is stored in place, with no reallocation and no reference
/// counting, for hot paths that write many small elements. Writing more than the span holds is a programming error
/// and traps.
extension OutputSpan where Element == UInt8 {
    /// The most octets ``appendDERHeader(_:length:)`` writes: a five-octet tag number and a nine-octet length.
    public static var maximumDERHeaderLength: Int { 15 }

    /// Appends an identifier and a DER length; the caller appends exactly `length` content octets next.
    public mutating func appendDERHeader(_ tag: ASN1Tag, length: Int) {
        let leading = tag.tagClass.rawValue << 6 | (tag.isConstructed ? 0x20 : 0)
        if tag.number < 0x1F {
            append(leading | UInt8(tag.number))
        } else {
            append(leading | 0x1F)
            let groups = (UInt32.bitWidth - tag.number.leadingZeroBitCount + 6) / 7
            for group in stride(from: groups - 1, through: 0, by: -1) {
                let bits = UInt8(truncatingIfNeeded: tag.number >> (group * 7)) & 0x7F
                append(group == 0 ? bits : bits | 0x80)
            }
        }
        if length < 0x80 {
            append(UInt8(length))
            return
        }
        let count = DERWriter.lengthOctetCount(length) - 1
        append(0x80 | UInt8(count))
        appendBigEndian(Int64(length), octets: count)
    }

    /// Appends an INTEGER in its shortest two's-complement form (at most ten octets).
    public mutating func appendDERInteger(_ value: Int64) {
        let count = DERWriter.integerContentLength(value)
        appendDERHeader(.integer, length: count)
        appendBigEndian(value, octets: count)
    }

    /// Appends `octets` verbatim.
    public mutating func appendOctets(_ octets: Span<UInt8>) {
        for index in octets.indices { append(octets[index]) }
    }

    /// Appends the UTF-8 of `text` verbatim.
    public mutating func appendUTF8(_ text: String) {
        appendOctets(text.utf8.span)
    }

    /// The low `octets` octets of `value`, most significant first.
    private mutating func appendBigEndian(_ value: Int64, octets: Int) {
        for index in stride(from: octets - 1, through: 0, by: -1) {
            append(UInt8(truncatingIfNeeded: value >> (index * 8)))
        }
    }
}
