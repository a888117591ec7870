/// Reads strict DER elements from a `Span<UInt8>` by position: no copies and no reference counting, for hot paths
/// that walk many small elements (a receipt payload has about fourteen per purchase). Positions are indices into
/// the span; errors report `base + position`, so they point into the original buffer as ``ASN1Reader``'s do.
public enum DERSpanReader {
    /// One element: its tag and where its content lies.
    public struct Element: Sendable {
        public let tag: ASN1Tag
        /// Index of the identifier octet.
        public let start: Int
        /// Index of the first content octet.
        public let contentStart: Int
        /// Index just past the content (and the element).
        public let end: Int

        public var contentCount: Int { end - contentStart }
    }

    /// The DER element at `position`, which must end at or before `limit`.
    public static func element(
        in span: Span<UInt8>,
        at position: Int,
        limit: Int,
        base: Int = 0
    ) throws(DERError) -> Element {
        var index = position
        guard index < limit else { throw DERError(.truncated, at: base + index) }
        let first = span[index]
        index += 1
        let tagClass: ASN1Tag.TagClass =
            switch first >> 6 {
            case 0: .universal
            case 1: .application
            case 2: .contextSpecific
            default: .private
            }
        var number = UInt32(first & 0x1F)
        if number == 0x1F {
            number = 0
            var count = 0
            while true {
                guard index < limit else { throw DERError(.truncated, at: base + index) }
                let byte = span[index]
                if count == 0 && byte == 0x80 { throw DERError(.invalidTagNumber, at: base + index) }
                guard number >> 25 == 0 else { throw DERError(.invalidTagNumber, at: base + index) }
                count += 1
                number = number << 7 | UInt32(byte & 0x7F)
                index += 1
                if byte & 0x80 == 0 { break }
            }
            guard number >= 0x1F else { throw DERError(.invalidTagNumber, at: base + position) }
        }
        let tag = ASN1Tag(tagClass, number: number, constructed: first & 0x20 != 0)
        if tagClass == .universal && number == 0 { throw DERError(.unexpectedEndOfContents, at: base + position) }
        guard index < limit else { throw DERError(.truncated, at: base + index) }
        let lengthStart = index
        let lengthOctet = span[index]
        index += 1
        var length = 0
        if lengthOctet < 0x80 {
            length = Int(lengthOctet)
        } else if lengthOctet == 0x80 {
            throw DERError(.indefiniteLengthNotAllowed, at: base + lengthStart)
        } else if lengthOctet == 0xFF {
            throw DERError(.reservedLengthOctet, at: base + lengthStart)
        } else {
            let octets = Int(lengthOctet & 0x7F)
            guard limit - index >= octets else { throw DERError(.truncated, at: base + lengthStart) }
            guard span[index] != 0 else { throw DERError(.nonMinimalLength, at: base + lengthStart) }
            guard octets <= 8 else { throw DERError(.lengthOverflow, at: base + lengthStart) }
            var value: UInt64 = 0
            for offset in 0..<octets { value = value << 8 | UInt64(span[index + offset]) }
            guard value <= UInt64(Int.max) else { throw DERError(.lengthOverflow, at: base + lengthStart) }
            guard value >= 0x80 else { throw DERError(.nonMinimalLength, at: base + lengthStart) }
            length = Int(value)
            index += octets
        }
        guard limit - index >= length else { throw DERError(.truncated, at: base + position) }
        return Element(tag: tag, start: position, contentStart: index, end: index + length)
    }

    /// The element at `position` with the tag the grammar requires.
    public static func element(
        in span: Span<UInt8>,
        at position: Int,
        limit: Int,
        base: Int = 0,
        expecting tag: ASN1Tag
    ) throws(DERError) -> Element {
        let element = try element(in: span, at: position, limit: limit, base: base)
        guard element.tag == tag else {
            throw DERError(.unexpectedTag(expected: tag, found: element.tag), at: base + position)
        }
        return element
    }

    /// Whether the elements from `position` up to `limit` are strict DER throughout: each of them, and everything
    /// nested in their constructed elements, at most `maximumDepth` levels deep.
    public static func isStrictDER(in span: Span<UInt8>, from position: Int, to limit: Int, maximumDepth: Int) -> Bool {
        guard maximumDepth > 0 else { return position == limit }
        var index = position
        while index < limit {
            guard let element = try? element(in: span, at: index, limit: limit) else { return false }
            if element.tag.isConstructed
                && !isStrictDER(in: span, from: element.contentStart, to: element.end, maximumDepth: maximumDepth - 1)
            {
                return false
            }
            index = element.end
        }
        return true
    }

    /// The value of an INTEGER element, which must be minimal and fit in 64 bits.
    public static func int64(in span: Span<UInt8>, _ element: Element, base: Int = 0) throws(DERError) -> Int64 {
        guard element.tag == .integer else {
            throw DERError(.unexpectedTag(expected: .integer, found: element.tag), at: base + element.start)
        }
        let count = element.contentCount
        guard count > 0 else { throw DERError(.invalidInteger, at: base + element.start) }
        let first = span[element.contentStart]
        if count > 1 {
            let second = span[element.contentStart + 1]
            if (first == 0x00 && second & 0x80 == 0) || (first == 0xFF && second & 0x80 != 0) {
                throw DERError(.invalidInteger, at: base + element.start)
            }
        }
        guard count <= 8 else { throw DERError(.integerOutOfRange, at: base + element.start) }
        var value: Int64 = first & 0x80 != 0 ? -1 : 0
        for index in element.contentStart..<element.end { value = value << 8 | Int64(span[index]) }
        return value
    }
}
