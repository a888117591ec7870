/// Why a BER or DER encoding was rejected, and where.
///
/// `offset` counts bytes from the start of the buffer that was first handed to ``ASN1Reader``, so a message can
/// point at the exact byte.
public struct DERError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Reason: Hashable, Sendable {
        /// The input ends before the identifier, length or content that it announces.
        case truncated
        /// A length field in long form that is longer than needed, or long form for a length below 128 (DER).
        case nonMinimalLength
        /// The indefinite length form (`0x80`), which DER forbids.
        case indefiniteLengthNotAllowed
        /// The indefinite length form on a primitive encoding, which no rule allows.
        case indefiniteLengthOnPrimitive
        /// The reserved length octet `0xFF`.
        case reservedLengthOctet
        /// A length that does not fit in memory addressing at all.
        case lengthOverflow
        /// A high tag number with padding, or one too large to represent.
        case invalidTagNumber
        /// An end-of-contents marker where none may be, or one with content.
        case unexpectedEndOfContents
        /// An indefinite-length encoding whose end-of-contents marker never comes.
        case missingEndOfContents
        /// The element found is not the one the grammar requires here.
        case unexpectedTag(expected: ASN1Tag, found: ASN1Tag)
        /// Bytes left over after the last element a grammar allows.
        case trailingData
        /// Nesting deeper than the reader's limit.
        case nestingTooDeep(limit: Int)
        /// An INTEGER that is empty or not in its shortest two's-complement form.
        case invalidInteger
        /// An INTEGER whose value does not fit the requested Swift type.
        case integerOutOfRange
        /// An OBJECT IDENTIFIER that is empty or whose sub-identifiers are not minimally encoded.
        case invalidObjectIdentifier
        /// A BOOLEAN that is not one byte, or (DER) not 0x00 or 0xFF.
        case invalidBoolean
        /// A NULL with content.
        case invalidNull
        /// A string whose bytes are not allowed by its type (invalid UTF-8, non-ASCII in an IA5String, …).
        case invalidString(ASN1Tag)
        /// A BIT STRING with a bad unused-bits count.
        case invalidBitString
        /// A constructed form where the rules require a primitive one (DER strings).
        case constructedStringNotAllowed
    }

    public let reason: Reason
    public let offset: Int

    public init(_ reason: Reason, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    public var description: String {
        let what: String
        switch reason {
        case .truncated: what = "the encoding is truncated"
        case .nonMinimalLength: what = "length is not in its shortest form"
        case .indefiniteLengthNotAllowed: what = "indefinite length is not allowed in DER"
        case .indefiniteLengthOnPrimitive: what = "indefinite length on a primitive element"
        case .reservedLengthOctet: what = "reserved length octet 0xFF"
        case .lengthOverflow: what = "length field is too large"
        case .invalidTagNumber: what = "invalid tag number encoding"
        case .unexpectedEndOfContents: what = "unexpected end-of-contents marker"
        case .missingEndOfContents: what = "indefinite-length element has no end-of-contents marker"
        case .unexpectedTag(let expected, let found): what = "expected \(expected), found \(found)"
        case .trailingData: what = "unexpected data after the last element"
        case .nestingTooDeep(let limit): what = "nesting deeper than \(limit) levels"
        case .invalidInteger: what = "INTEGER is empty or not minimally encoded"
        case .integerOutOfRange: what = "INTEGER is out of range"
        case .invalidObjectIdentifier: what = "OBJECT IDENTIFIER is malformed"
        case .invalidBoolean: what = "BOOLEAN is malformed"
        case .invalidNull: what = "NULL has content"
        case .invalidString(let tag): what = "\(tag) contains bytes its type does not allow"
        case .invalidBitString: what = "BIT STRING is malformed"
        case .constructedStringNotAllowed: what = "constructed string encoding is not allowed in DER"
        }
        return "\(what) (at byte \(offset))"
    }
}
