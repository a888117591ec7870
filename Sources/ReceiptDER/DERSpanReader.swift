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

    /// The INTEGER at `position` (minimal, at most 64 bits, ending at or before `limit`) and where it ends: one
    /// step for what ``element(in:at:limit:base:expecting:)`` then ``int64(in:_:base:)`` read, with the same errors.
    public static func integer(in span: Span<UInt8>, at position: Int, limit: Int, base: Int = 0)
        throws(DERError) -> (value: Int64, end: Int)
    {
        if limit - position >= 3 && span[position] == 0x02 && (1...8).contains(span[position + 1]) {
            let element = Element(
                tag: .integer, start: position, contentStart: position + 2, end: position + 2 + Int(span[position + 1]))
            if element.end <= limit && isMinimalInteger(in: span, element) {
                return (value(in: span, element), element.end)
            }
        }
        let element = try element(in: span, at: position, limit: limit, base: base, expecting: .integer)
        return (try int64(in: span, element, base: base), element.end)
    }

    /// Whether the content of `element` is an INTEGER's shortest two's-complement form: at least one octet, and
    /// no leading 00 or FF octet that the next octet does not need for the sign.
    public static func isMinimalInteger(in span: Span<UInt8>, _ element: Element) -> Bool {
        guard element.contentCount > 0 else { return false }
        guard element.contentCount > 1 else { return true }
        let (first, second) = (span[element.contentStart], span[element.contentStart + 1])
        return !(first == 0x00 && second & 0x80 == 0) && !(first == 0xFF && second & 0x80 != 0)
    }

    /// The value of an INTEGER element, which must be minimal and fit in 64 bits.
    public static func int64(in span: Span<UInt8>, _ element: Element, base: Int = 0) throws(DERError) -> Int64 {
        guard element.tag == .integer else {
            throw DERError(.unexpectedTag(expected: .integer, found: element.tag), at: base + element.start)
        }
        guard isMinimalInteger(in: span, element) else { throw DERError(.invalidInteger, at: base + element.start) }
        guard element.contentCount <= 8 else { throw DERError(.integerOutOfRange, at: base + element.start) }
        return value(in: span, element)
    }

    /// The two's-complement value of the one to eight content octets of `element`.
    private static func value(in span: Span<UInt8>, _ element: Element) -> Int64 {
        var value: Int64 = span[element.contentStart] & 0x80 != 0 ? -1 : 0
        for index in element.contentStart..<element.end { value = value << 8 | Int64(span[index]) }
        return value
    }
}
