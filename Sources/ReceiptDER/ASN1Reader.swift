/// Reads consecutive TLV elements from a slice, one at a time, enforcing DER or BER.
///
/// The reader never allocates in proportion to a length it was told: a length is checked against the bytes that are
/// really there before anything else happens, and indefinite-length elements are scanned with a depth limit.
public struct ASN1Reader: Sendable {
    /// Deep enough for any CMS envelope or receipt (they nest about a dozen levels).
    public static let defaultMaximumDepth = 32

    public let rules: EncodingRules
    public let maximumDepth: Int
    private var remaining: ArraySlice<UInt8>
    private let depth: Int

    public init(_ bytes: ArraySlice<UInt8>, rules: EncodingRules, maximumDepth: Int = ASN1Reader.defaultMaximumDepth) {
        self.init(bytes, rules: rules, depth: 0, maximumDepth: maximumDepth)
    }

    init(_ bytes: ArraySlice<UInt8>, rules: EncodingRules, depth: Int, maximumDepth: Int) {
        self.remaining = bytes
        self.rules = rules
        self.depth = depth
        self.maximumDepth = maximumDepth
    }

    /// True when every element has been read.
    public var isAtEnd: Bool { remaining.isEmpty }

    /// Offset of the next unread byte in the original buffer.
    public var offset: Int { remaining.startIndex }

    /// The tag of the next element, without consuming it; nil at the end.
    public func peekTag() throws(DERError) -> ASN1Tag? {
        if remaining.isEmpty { return nil }
        return try Self.parseIdentifier(remaining).tag
    }

    /// Reads the next element, whatever it is.
    public mutating func readNode() throws(DERError) -> ASN1Node {
        let node = try Self.readElement(remaining, rules: rules, depth: depth, maximumDepth: maximumDepth)
        remaining = remaining[node.encoded.endIndex...]
        return node
    }

    /// Reads the next element and requires it to carry `tag`.
    public mutating func readNode(expecting tag: ASN1Tag) throws(DERError) -> ASN1Node {
        let start = offset
        let node = try readNode()
        guard node.tag == tag else { throw DERError(.unexpectedTag(expected: tag, found: node.tag), at: start) }
        return node
    }

    /// Reads the next element only when it carries `tag`; otherwise leaves the reader untouched and returns nil.
    public mutating func readOptionalNode(_ tag: ASN1Tag) throws(DERError) -> ASN1Node? {
        guard try peekTag() == tag else { return nil }
        return try readNode()
    }

    /// Requires that nothing is left.
    public func finish() throws(DERError) {
        guard remaining.isEmpty else { throw DERError(.trailingData, at: offset) }
    }

    // MARK: - Encoding

    private struct Identifier {
        let tag: ASN1Tag
        let length: Int
    }

    private static func parseIdentifier(_ bytes: ArraySlice<UInt8>) throws(DERError) -> Identifier {
        var index = bytes.startIndex
        guard index < bytes.endIndex else { throw DERError(.truncated, at: index) }
        let first = bytes[index]
        index += 1
        let tagClass: ASN1Tag.TagClass =
            switch first >> 6 {
            case 0: .universal
            case 1: .application
            case 2: .contextSpecific
            default: .private
            }
        let constructed = first & 0x20 != 0
        var number = UInt32(first & 0x1F)
        if number == 0x1F {
            number = 0
            var count = 0
            while true {
                guard index < bytes.endIndex else { throw DERError(.truncated, at: index) }
                let byte = bytes[index]
                if count == 0 && byte == 0x80 { throw DERError(.invalidTagNumber, at: index) }
                count += 1
                // Seven more bits must still fit in the UInt32 that `ASN1Tag.number` (and DERWriter) allows.
                guard number >> 25 == 0 else { throw DERError(.invalidTagNumber, at: index) }
                number = number << 7 | UInt32(byte & 0x7F)
                index += 1
                if byte & 0x80 == 0 { break }
            }
            guard number >= 0x1F else { throw DERError(.invalidTagNumber, at: bytes.startIndex) }
        }
        return Identifier(
            tag: ASN1Tag(tagClass, number: number, constructed: constructed), length: index - bytes.startIndex)
    }

    /// The length field: nil for the indefinite form.
    private static func parseLength(
        _ bytes: ArraySlice<UInt8>,
        at start: Int,
        rules: EncodingRules,
        constructed: Bool
    ) throws(DERError) -> (length: Int?, end: Int) {
        guard start < bytes.endIndex else { throw DERError(.truncated, at: start) }
        let first = bytes[start]
        if first < 0x80 { return (Int(first), start + 1) }
        if first == 0x80 {
            guard rules == .ber else { throw DERError(.indefiniteLengthNotAllowed, at: start) }
            guard constructed else { throw DERError(.indefiniteLengthOnPrimitive, at: start) }
            return (nil, start + 1)
        }
        if first == 0xFF { throw DERError(.reservedLengthOctet, at: start) }
        let octets = Int(first & 0x7F)
        guard bytes.endIndex - (start + 1) >= octets else { throw DERError(.truncated, at: start) }
        var value: UInt64 = 0
        for index in (start + 1)..<(start + 1 + octets) {
            let byte = bytes[index]
            if rules == .der && index == start + 1 && byte == 0 { throw DERError(.nonMinimalLength, at: start) }
            guard value >> 55 == 0 else { throw DERError(.lengthOverflow, at: start) }
            value = value << 8 | UInt64(byte)
        }
        guard value <= UInt64(Int.max) else { throw DERError(.lengthOverflow, at: start) }
        if rules == .der && value < 0x80 { throw DERError(.nonMinimalLength, at: start) }
        return (Int(value), start + 1 + octets)
    }

    private static func readElement(
        _ bytes: ArraySlice<UInt8>,
        rules: EncodingRules,
        depth: Int,
        maximumDepth: Int
    ) throws(DERError) -> ASN1Node {
        let start = bytes.startIndex
        // `depth` counts the elements around this one, so `maximumDepth` levels are depths 0 to maximumDepth - 1.
        guard depth < maximumDepth else { throw DERError(.nestingTooDeep(limit: maximumDepth), at: start) }
        let identifier = try parseIdentifier(bytes)
        let tag = identifier.tag
        let (length, contentStart) = try parseLength(
            bytes, at: start + identifier.length, rules: rules, constructed: tag.isConstructed)
        if tag.tagClass == .universal && tag.number == 0 {
            throw DERError(.unexpectedEndOfContents, at: start)
        }
        if let length {
            guard bytes.endIndex - contentStart >= length else { throw DERError(.truncated, at: start) }
            let end = contentStart + length
            return ASN1Node(
                tag: tag, encoded: bytes[start..<end], content: bytes[contentStart..<end], isIndefiniteLength: false,
                rules: rules, depth: depth, maximumDepth: maximumDepth)
        }
        let contentEnd = try endOfContents(bytes, from: contentStart, depth: depth + 1, maximumDepth: maximumDepth)
        return ASN1Node(
            tag: tag, encoded: bytes[start..<(contentEnd + 2)], content: bytes[contentStart..<contentEnd],
            isIndefiniteLength: true, rules: rules, depth: depth, maximumDepth: maximumDepth)
    }

    /// Finds the end-of-contents marker that closes an indefinite-length element whose content starts at `start`.
    private static func endOfContents(
        _ bytes: ArraySlice<UInt8>,
        from start: Int,
        depth: Int,
        maximumDepth: Int
    ) throws(DERError) -> Int {
        var index = start
        while true {
            guard bytes.endIndex - index >= 2 else { throw DERError(.missingEndOfContents, at: start) }
            if bytes[index] == 0 {
                guard bytes[index + 1] == 0 else { throw DERError(.unexpectedEndOfContents, at: index) }
                return index
            }
            let child = try readElement(bytes[index...], rules: .ber, depth: depth, maximumDepth: maximumDepth)
            index = child.encoded.endIndex
        }
    }
}
