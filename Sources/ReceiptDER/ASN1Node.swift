/// Which encoding rules a reader enforces.
public enum EncodingRules: Sendable {
    /// Distinguished Encoding Rules: definite, minimal lengths; primitive strings.
    case der
    /// Basic Encoding Rules as real CMS envelopes use them: indefinite lengths on constructed elements, long-form
    /// lengths with extra octets, and strings split into constructed chunks.
    case ber
}

/// One TLV element, pointing into the buffer it was read from (no bytes are copied).
public struct ASN1Node: Sendable {
    public let tag: ASN1Tag
    /// The whole element: identifier, length, content and, for indefinite lengths, the end-of-contents marker.
    public let encoded: ArraySlice<UInt8>
    /// The content octets alone.
    public let content: ArraySlice<UInt8>
    /// Whether the element used the BER indefinite length form.
    public let isIndefiniteLength: Bool
    let rules: EncodingRules
    let depth: Int
    let maximumDepth: Int

    /// Byte offset of the element in the original buffer.
    public var offset: Int { encoded.startIndex }

    /// A reader over the children of a constructed element.
    public func children() throws(DERError) -> ASN1Reader {
        guard tag.isConstructed else {
            throw DERError(.unexpectedTag(expected: tag.toggledForm, found: tag), at: offset)
        }
        return ASN1Reader(content, rules: rules, depth: depth + 1, maximumDepth: maximumDepth)
    }

    /// Parses exactly one element that fills `bytes` entirely.
    public static func parse(
        _ bytes: ArraySlice<UInt8>,
        rules: EncodingRules,
        maximumDepth: Int = ASN1Reader.defaultMaximumDepth
    ) throws(DERError) -> ASN1Node {
        var reader = ASN1Reader(bytes, rules: rules, maximumDepth: maximumDepth)
        let node = try reader.readNode()
        try reader.finish()
        return node
    }

    public static func parse(
        _ bytes: [UInt8],
        rules: EncodingRules,
        maximumDepth: Int = ASN1Reader.defaultMaximumDepth
    ) throws(DERError) -> ASN1Node {
        try parse(bytes[...], rules: rules, maximumDepth: maximumDepth)
    }
}
