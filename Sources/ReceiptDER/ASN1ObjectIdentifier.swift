/// An OBJECT IDENTIFIER (X.690 §8.19), kept as the content octets of its DER encoding. DER has one encoding per
/// identifier, so comparing octets compares identifiers, without decoding or allocating.
public struct ASN1ObjectIdentifier: Hashable, Sendable, CustomStringConvertible {
    private let octets: ArraySlice<UInt8>

    /// For constants written in code: the arcs are taken as given (at least two, the first 0, 1 or 2).
    public init(arcs: UInt64...) {
        octets = Self.encode(arcs)[...]
    }

    /// From dotted text such as `"1.2.840.113549.1.7.2"`; nil unless it has two or more valid arcs, each ASCII
    /// digits without a sign or leading zero (RFC 4512 §1.4 `numericoid`).
    public init?(_ dotted: String) {
        var arcs: [UInt64] = []
        for part in dotted.split(separator: ".", omittingEmptySubsequences: false) {
            guard !part.isEmpty, part.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                part == "0" || part.first != "0",
                let arc = UInt64(part)
            else { return nil }
            arcs.append(arc)
        }
        guard arcs.count >= 2, arcs[0] <= 2, arcs[0] == 2 || arcs[1] < 40 else { return nil }
        guard arcs[1] <= UInt64.max - 80 else { return nil }
        octets = Self.encode(arcs)[...]
    }

    /// From the content octets of an encoded OBJECT IDENTIFIER (kept without copying); nil if they are empty,
    /// padded or a sub-identifier exceeds 64 bits.
    public init?(contentOctets: ArraySlice<UInt8>) {
        guard let last = contentOctets.last, last & 0x80 == 0 else { return nil }
        var value: UInt64 = 0
        var startOfSubidentifier = true
        for byte in contentOctets {
            if startOfSubidentifier && byte == 0x80 { return nil }
            guard value >> 57 == 0 else { return nil }
            value = value << 7 | UInt64(byte & 0x7F)
            startOfSubidentifier = byte & 0x80 == 0
            if startOfSubidentifier { value = 0 }
        }
        octets = contentOctets
    }

    /// Equal when the content octets are (DER has one encoding per identifier).
    public static func == (lhs: ASN1ObjectIdentifier, rhs: ASN1ObjectIdentifier) -> Bool {
        let (left, right) = (lhs.octets.span, rhs.octets.span)
        guard left.count == right.count else { return false }
        for index in left.indices where left[index] != right[index] { return false }
        return true
    }

    /// The arcs, e.g. `[1, 2, 840, 113549, 1, 7, 2]`.
    public var arcs: [UInt64] {
        var subidentifiers: [UInt64] = []
        var value: UInt64 = 0
        for byte in octets {
            value = value << 7 | UInt64(byte & 0x7F)
            if byte & 0x80 == 0 {
                subidentifiers.append(value)
                value = 0
            }
        }
        guard let first = subidentifiers.first else { return [] }
        let head: [UInt64] = first < 40 ? [0, first] : first < 80 ? [1, first - 40] : [2, first - 80]
        return head + subidentifiers.dropFirst()
    }

    /// The content octets of the DER encoding.
    public var contentOctets: [UInt8] { Array(octets) }

    public var description: String { arcs.map(String.init).joined(separator: ".") }

    private static func encode(_ arcs: [UInt64]) -> [UInt8] {
        var octets: [UInt8] = []
        guard arcs.count >= 2 else { return octets }
        let subidentifiers = [arcs[0] * 40 + arcs[1]] + arcs.dropFirst(2)
        for value in subidentifiers {
            var groups: [UInt8] = [UInt8(value & 0x7F)]
            var rest = value >> 7
            while rest > 0 {
                groups.append(UInt8(rest & 0x7F) | 0x80)
                rest >>= 7
            }
            octets.append(contentsOf: groups.reversed())
        }
        return octets
    }
}
