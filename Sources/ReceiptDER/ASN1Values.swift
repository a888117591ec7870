/// Typed readers for the universal types, on top of ``ASN1Reader``.
///
/// Each one reads the next element, checks its tag, and validates the content as the type's grammar requires
/// (X.690 §8). Strings accept the BER constructed form only under BER rules.
extension ASN1Reader {
    /// `SEQUENCE { … }`: a reader over its elements.
    public mutating func readSequence() throws(DERError) -> ASN1Reader {
        try readNode(expecting: .sequence).children()
    }

    /// `SET { … }` / `SET OF`: a reader over its elements (order is not checked).
    public mutating func readSet() throws(DERError) -> ASN1Reader {
        try readNode(expecting: .set).children()
    }

    /// `INTEGER`, as the value bytes of its minimal two's-complement form.
    public mutating func readIntegerBytes() throws(DERError) -> ArraySlice<UInt8> {
        try readNode(expecting: .integer).integerBytes()
    }

    /// `INTEGER` that must fit in 64 bits.
    public mutating func readInt64() throws(DERError) -> Int64 {
        try readNode(expecting: .integer).int64Value()
    }

    /// `INTEGER` that must fit in `T`.
    public mutating func readInteger<T: FixedWidthInteger>(_ type: T.Type = T.self) throws(DERError) -> T {
        try readNode(expecting: .integer).integerValue(T.self)
    }

    /// `OBJECT IDENTIFIER`.
    public mutating func readObjectIdentifier() throws(DERError) -> ASN1ObjectIdentifier {
        try readNode(expecting: .objectIdentifier).objectIdentifier()
    }

    /// `OCTET STRING`, primitive, or (BER only) constructed from chunks.
    public mutating func readOctetString() throws(DERError) -> ArraySlice<UInt8> {
        let start = offset
        let node = try readNode()
        guard node.tag == .octetString || node.tag == ASN1Tag.octetString.toggledForm else {
            throw DERError(.unexpectedTag(expected: .octetString, found: node.tag), at: start)
        }
        return try node.octetStringBytes()
    }

    /// `NULL`.
    public mutating func readNull() throws(DERError) {
        let node = try readNode(expecting: .null)
        guard node.content.isEmpty else { throw DERError(.invalidNull, at: node.offset) }
    }
}

extension ASN1Node {
    /// The content of an INTEGER, checked to be non-empty and minimal (X.690 §8.3.2, required by BER and DER).
    public func integerBytes() throws(DERError) -> ArraySlice<UInt8> {
        try requireTag(.integer)
        guard let first = content.first else { throw DERError(.invalidInteger, at: offset) }
        if content.count > 1 {
            let second = content[content.startIndex + 1]
            if (first == 0x00 && second & 0x80 == 0) || (first == 0xFF && second & 0x80 != 0) {
                throw DERError(.invalidInteger, at: offset)
            }
        }
        return content
    }

    /// The value of an INTEGER that must fit in 64 bits.
    public func int64Value() throws(DERError) -> Int64 {
        let bytes = try integerBytes()
        guard bytes.count <= 8 else { throw DERError(.integerOutOfRange, at: offset) }
        var value: Int64 = bytes[bytes.startIndex] & 0x80 != 0 ? -1 : 0
        for byte in bytes { value = value << 8 | Int64(byte) }
        return value
    }

    /// The value of an INTEGER, which must fit in `T` (a negative value never fits an unsigned type).
    public func integerValue<T: FixedWidthInteger>(_ type: T.Type = T.self) throws(DERError) -> T {
        let bytes = try integerBytes()
        let negative = bytes[bytes.startIndex] & 0x80 != 0
        if negative && !T.isSigned { throw DERError(.integerOutOfRange, at: offset) }
        var magnitude = bytes
        if !negative && magnitude.count > 1 && magnitude[magnitude.startIndex] == 0 {
            magnitude = magnitude.dropFirst()
        }
        guard magnitude.count <= T.bitWidth / 8 else { throw DERError(.integerOutOfRange, at: offset) }
        var value: T = negative ? ~0 : 0
        for byte in magnitude {
            value = (value << 8) | T(truncatingIfNeeded: byte)
        }
        if T.isSigned && !negative && value < 0 { throw DERError(.integerOutOfRange, at: offset) }
        return value
    }

    /// The value of an OBJECT IDENTIFIER.
    public func objectIdentifier() throws(DERError) -> ASN1ObjectIdentifier {
        try requireTag(.objectIdentifier)
        guard let identifier = ASN1ObjectIdentifier(contentOctets: content) else {
            throw DERError(.invalidObjectIdentifier, at: offset)
        }
        return identifier
    }

    /// The octets of an OCTET STRING, or of a string implicitly tagged `implicitTag` (given in its primitive
    /// form). A primitive string is returned without copying; a BER constructed string is the concatenation of its
    /// chunks (which may themselves be constructed, up to the depth limit).
    public func octetStringBytes(implicitTag: ASN1Tag = .octetString) throws(DERError) -> ArraySlice<UInt8> {
        if tag == implicitTag { return content }
        guard tag == implicitTag.toggledForm else {
            throw DERError(.unexpectedTag(expected: implicitTag, found: tag), at: offset)
        }
        guard rules == .ber else { throw DERError(.constructedStringNotAllowed, at: offset) }
        var joined: [UInt8] = []
        joined.reserveCapacity(content.count)
        try appendChunks(of: self, to: &joined)
        return joined[...]
    }

    private func appendChunks(of node: ASN1Node, to joined: inout [UInt8]) throws(DERError) {
        var chunks = try node.children()
        while !chunks.isAtEnd {
            let chunk = try chunks.readNode()
            if chunk.tag == .octetString {
                joined.append(contentsOf: chunk.content)
            } else if chunk.tag == ASN1Tag.octetString.toggledForm {
                try appendChunks(of: chunk, to: &joined)
            } else {
                throw DERError(.unexpectedTag(expected: .octetString, found: chunk.tag), at: chunk.offset)
            }
        }
    }

    /// The text of a UTF8String, which must be valid UTF-8.
    public func utf8String() throws(DERError) -> String {
        try requireTag(.utf8String)
        guard let text = String(validating: content, as: UTF8.self) else {
            throw DERError(.invalidString(.utf8String), at: offset)
        }
        return text
    }

    /// The text of an IA5String, which must be 7-bit ASCII.
    public func ia5String() throws(DERError) -> String {
        try requireTag(.ia5String)
        guard content.allSatisfy({ $0 < 0x80 }) else { throw DERError(.invalidString(.ia5String), at: offset) }
        return String(decoding: content, as: UTF8.self)
    }

    private func requireTag(_ expected: ASN1Tag) throws(DERError) {
        guard tag == expected else { throw DERError(.unexpectedTag(expected: expected, found: tag), at: offset) }
    }
}
