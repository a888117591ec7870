/// Builds DER encodings: definite, minimal lengths; SET OF elements sorted by their encodings (X.690 §11.6).
public struct DERWriter: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init() {}

    /// A writer with room for `capacity` bytes, for callers that know the size of what they write.
    public init(capacity: Int) {
        bytes.reserveCapacity(capacity)
    }

    /// The size of a whole element with a low-numbered tag (below 31) and `contentLength` content octets.
    public static func encodedLength(contentLength: Int) -> Int {
        1 + lengthOctetCount(contentLength) + contentLength
    }

    /// How many octets the DER length field of `length` takes.
    public static func lengthOctetCount(_ length: Int) -> Int {
        guard length >= 0x80 else { return 1 }
        return 1 + (Int.bitWidth - length.leadingZeroBitCount + 7) / 8
    }

    /// Appends an identifier and a length; the caller appends exactly `length` content octets next.
    public mutating func appendHeader(_ tag: ASN1Tag, length: Int) {
        bytes.append(addingCapacity: OutputSpan<UInt8>.maximumDERHeaderLength) {
            $0.appendDERHeader(tag, length: length)
        }
    }

    /// Appends an element with the given tag and content octets.
    public mutating func append(_ tag: ASN1Tag, content: [UInt8]) {
        appendHeader(tag, length: content.count)
        bytes.append(contentsOf: content)
    }

    /// Appends an element with the given tag and content octets.
    public mutating func append(_ tag: ASN1Tag, content: ArraySlice<UInt8>) {
        appendHeader(tag, length: content.count)
        bytes.append(contentsOf: content)
    }

    /// Appends an element whose content is any sequence of octets (gathered into an array first).
    public mutating func append(_ tag: ASN1Tag, content: some Sequence<UInt8>) {
        append(tag, content: Array(content))
    }

    /// Appends an element whose content is `parts` one after the other.
    public mutating func append(_ tag: ASN1Tag, contentsOf parts: [[UInt8]]) {
        appendHeader(tag, length: parts.reduce(0) { $0 + $1.count })
        for part in parts { bytes.append(contentsOf: part) }
    }

    /// Appends a constructed element whose content `build` writes.
    public mutating func appendConstructed(
        _ tag: ASN1Tag,
        _ build: (inout DERWriter) throws -> Void
    ) rethrows {
        var inner = DERWriter()
        try build(&inner)
        append(tag, content: inner.bytes)
    }

    /// Appends `SEQUENCE { … }`.
    public mutating func appendSequence(_ build: (inout DERWriter) throws -> Void) rethrows {
        try appendConstructed(.sequence, build)
    }

    /// Appends `SET OF` with its elements in DER order, whatever order they are given in.
    public mutating func appendSetOf(_ encodedElements: [[UInt8]]) {
        append(.set, contentsOf: encodedElements.sorted { $0.lexicographicallyPrecedes($1) })
    }

    /// Appends an already encoded element verbatim.
    public mutating func appendEncoded(_ encoded: [UInt8]) {
        bytes.append(contentsOf: encoded)
    }

    /// Appends an already encoded element verbatim.
    public mutating func appendEncoded(_ encoded: ArraySlice<UInt8>) {
        bytes.append(contentsOf: encoded)
    }

    /// Appends an INTEGER in its shortest two's-complement form.
    public mutating func appendInteger(_ value: Int64) {
        bytes.append(addingCapacity: 10) { $0.appendDERInteger(value) }
    }

    /// Appends an INTEGER in its shortest two's-complement form.
    public mutating func appendInteger(_ value: Int) {
        appendInteger(Int64(value))
    }

    /// Appends an INTEGER of any width in its shortest two's-complement form.
    public mutating func appendInteger<T: FixedWidthInteger>(_ value: T) {
        if let small = Int64(exactly: value) { return appendInteger(small) }
        var bigEndian: [UInt8] = T.isSigned ? [] : [0]
        for index in stride(from: T.bitWidth / 8 - 1, through: 0, by: -1) {
            bigEndian.append(UInt8(truncatingIfNeeded: value >> (index * 8)))
        }
        appendInteger(twosComplement: bigEndian[...])
    }

    /// Appends an INTEGER in its shortest two's-complement form (a leading zero octet when the top bit is set).
    public mutating func appendInteger(_ value: UInt64) {
        var bigEndian: [UInt8] = [0]
        for index in stride(from: 7, through: 0, by: -1) {
            bigEndian.append(UInt8(truncatingIfNeeded: value >> (index * 8)))
        }
        appendInteger(twosComplement: bigEndian[...])
    }

    /// Appends an INTEGER from big-endian two's-complement octets, trimming redundant leading octets.
    public mutating func appendInteger(twosComplement octets: [UInt8]) {
        appendInteger(twosComplement: octets[...])
    }

    /// Appends an INTEGER from big-endian two's-complement octets, trimming redundant leading octets.
    public mutating func appendInteger(twosComplement octets: ArraySlice<UInt8>) {
        var start = octets.startIndex
        while octets.endIndex - start > 1 {
            let (first, second) = (octets[start], octets[start + 1])
            guard (first == 0 && second & 0x80 == 0) || (first == 0xFF && second & 0x80 != 0) else { break }
            start += 1
        }
        append(.integer, content: octets.isEmpty ? [0] : octets[start...])
    }

    public mutating func appendObjectIdentifier(_ identifier: ASN1ObjectIdentifier) {
        append(.objectIdentifier, content: identifier.contentOctets)
    }

    public mutating func appendOctetString(_ octets: [UInt8]) {
        append(.octetString, content: octets)
    }

    public mutating func appendOctetString(_ octets: ArraySlice<UInt8>) {
        append(.octetString, content: octets)
    }

    public mutating func appendUTF8String(_ text: String) {
        appendHeader(.utf8String, length: text.utf8.count)
        bytes.append(contentsOf: text.utf8)
    }

    /// Appends an IA5String; the caller guarantees the text is ASCII.
    public mutating func appendIA5String(_ text: String) {
        appendHeader(.ia5String, length: text.utf8.count)
        bytes.append(contentsOf: text.utf8)
    }

    /// The number of content octets of `value` as a minimal INTEGER.
    public static func integerContentLength(_ value: Int64) -> Int {
        // The significant bits of the value (of its complement when negative), plus a sign bit, in whole octets.
        let magnitude = value < 0 ? ~value : value
        return (Int64.bitWidth - magnitude.leadingZeroBitCount) / 8 + 1
    }

    public mutating func appendNull() {
        appendHeader(.null, length: 0)
    }
}

extension ASN1Node {
    /// The element re-encoded with definite, minimal lengths throughout (BER's indefinite and long-form lengths
    /// removed; contents and element order untouched). An element that already uses only minimal definite lengths
    /// comes back unchanged, without copying.
    public func definiteLengthEncoding() throws(DERError) -> ArraySlice<UInt8> {
        let span = encoded.span
        if DERSpanReader.isStrictDER(in: span, from: 0, to: span.count, maximumDepth: maximumDepth) { return encoded }
        var writer = DERWriter()
        try writeDefinite(self, to: &writer)
        return writer.bytes[...]
    }

    private func writeDefinite(_ node: ASN1Node, to writer: inout DERWriter) throws(DERError) {
        guard node.tag.isConstructed else {
            writer.append(node.tag, content: node.content)
            return
        }
        var inner = DERWriter()
        var children = try node.children()
        while !children.isAtEnd { try writeDefinite(try children.readNode(), to: &inner) }
        writer.append(node.tag, content: inner.bytes)
    }
}
