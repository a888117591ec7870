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

        @usableFromInline
        init(tag: ASN1Tag, start: Int, contentStart: Int, end: Int) {
            self.tag = tag
            self.start = start
            self.contentStart = contentStart
            self.end = end
        }

        @inlinable
        public var contentCount: Int { end - contentStart }
    }

    /// Where the content of the element at `position` lies, when it has `tag` in one identifier octet (a tag
    /// number below 31) and a strict DER length of at most two octets, ending at or before `limit`; nil for anything
    /// else. What it returns is what ``element(in:at:limit:base:)`` reads there; nil only means "not this, here",
    /// and that reader then says what is there or what is wrong. Inlined into hot paths (where `tag` is a
    /// constant), it reads each octet once and never throws.
    @inlinable @inline(__always)
    public static func content(_ tag: ASN1Tag, in span: Span<UInt8>, at position: Int, limit: Int) -> Range<Int>? {
        guard let identifier = tag.singleOctetIdentifier, identifier != 0, limit - position >= 2,
            span[position] == identifier
        else { return nil }
        var contentStart = position + 2
        var length = Int(span[position + 1])
        if length >= 0x80 {
            switch length {
            case 0x81:
                guard limit - contentStart >= 1 else { return nil }
                length = Int(span[contentStart])
                guard length >= 0x80 else { return nil }
                contentStart += 1
            case 0x82:
                guard limit - contentStart >= 2, span[contentStart] != 0 else { return nil }
                length = Int(span[contentStart]) << 8 | Int(span[contentStart + 1])
                contentStart += 2
            default:
                return nil
            }
        }
        guard limit - contentStart >= length else { return nil }
        return contentStart..<(contentStart + length)
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
    @inlinable
    public static func element(
        in span: Span<UInt8>,
        at position: Int,
        limit: Int,
        base: Int = 0,
        expecting tag: ASN1Tag
    ) throws(DERError) -> Element {
        if let content = content(tag, in: span, at: position, limit: limit) {
            return Element(tag: tag, start: position, contentStart: content.lowerBound, end: content.upperBound)
        }
        return try elementReadInFull(in: span, at: position, limit: limit, base: base, expecting: tag)
    }

    /// ``element(in:at:limit:base:expecting:)`` for every element and every error.
    @usableFromInline
    static func elementReadInFull(
        in span: Span<UInt8>,
        at position: Int,
        limit: Int,
        base: Int,
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
    @inlinable
    public static func integer(in span: Span<UInt8>, at position: Int, limit: Int, base: Int = 0)
        throws(DERError) -> (value: Int64, end: Int)
    {
        if let content = content(.integer, in: span, at: position, limit: limit),
            let value = int64(ifMinimal: content, in: span)
        {
            return (value, content.upperBound)
        }
        return try integerReadInFull(in: span, at: position, limit: limit, base: base)
    }

    /// ``integer(in:at:limit:base:)`` for every element and every error.
    @usableFromInline
    static func integerReadInFull(in span: Span<UInt8>, at position: Int, limit: Int, base: Int)
        throws(DERError) -> (value: Int64, end: Int)
    {
        let element = try elementReadInFull(in: span, at: position, limit: limit, base: base, expecting: .integer)
        return (try int64(in: span, element, base: base), element.end)
    }

    /// The value of the INTEGER content octets at `content` when they are minimal and at most eight (what
    /// ``int64(in:_:base:)`` accepts); nil otherwise. Inlined into hot paths; never throws.
    @inlinable @inline(__always)
    public static func int64(ifMinimal content: Range<Int>, in span: Span<UInt8>) -> Int64? {
        guard content.count >= 1, content.count <= 8 else { return nil }
        var value = Int64(Int8(bitPattern: span[content.lowerBound]))
        var index = content.lowerBound + 1
        guard index < content.upperBound else { return value }
        // A leading 00 or FF is padding unless the next octet needs it for the sign.
        guard !(value == 0 && span[index] < 0x80), !(value == -1 && span[index] >= 0x80) else { return nil }
        while index < content.upperBound {
            value = value << 8 | Int64(span[index])
            index += 1
        }
        return value
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
