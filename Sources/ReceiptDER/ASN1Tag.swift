/// An ASN.1 identifier: class, primitive or constructed form, and tag number (X.690 §8.1.2).
public struct ASN1Tag: Hashable, Sendable, CustomStringConvertible {
    /// The two class bits of an identifier octet.
    public enum TagClass: UInt8, Sendable {
        case universal = 0
        case application = 1
        case contextSpecific = 2
        case `private` = 3
    }

    public let tagClass: TagClass
    public let isConstructed: Bool
    public let number: UInt32

    @inlinable
    public init(_ tagClass: TagClass, number: UInt32, constructed: Bool) {
        self.tagClass = tagClass
        self.number = number
        self.isConstructed = constructed
    }

    @inlinable public static var boolean: ASN1Tag { ASN1Tag(.universal, number: 1, constructed: false) }
    @inlinable public static var integer: ASN1Tag { ASN1Tag(.universal, number: 2, constructed: false) }
    @inlinable public static var bitString: ASN1Tag { ASN1Tag(.universal, number: 3, constructed: false) }
    @inlinable public static var octetString: ASN1Tag { ASN1Tag(.universal, number: 4, constructed: false) }
    @inlinable public static var null: ASN1Tag { ASN1Tag(.universal, number: 5, constructed: false) }
    @inlinable public static var objectIdentifier: ASN1Tag { ASN1Tag(.universal, number: 6, constructed: false) }
    @inlinable public static var utf8String: ASN1Tag { ASN1Tag(.universal, number: 12, constructed: false) }
    @inlinable public static var sequence: ASN1Tag { ASN1Tag(.universal, number: 16, constructed: true) }
    @inlinable public static var set: ASN1Tag { ASN1Tag(.universal, number: 17, constructed: true) }
    @inlinable public static var printableString: ASN1Tag { ASN1Tag(.universal, number: 19, constructed: false) }
    @inlinable public static var ia5String: ASN1Tag { ASN1Tag(.universal, number: 22, constructed: false) }
    @inlinable public static var utcTime: ASN1Tag { ASN1Tag(.universal, number: 23, constructed: false) }
    @inlinable public static var generalizedTime: ASN1Tag { ASN1Tag(.universal, number: 24, constructed: false) }

    /// `[number]` in the context-specific class, e.g. the `[0] EXPLICIT` wrappers of CMS.
    @inlinable
    public static func contextSpecific(_ number: UInt32, constructed: Bool) -> ASN1Tag {
        ASN1Tag(.contextSpecific, number: number, constructed: constructed)
    }

    /// The same tag in the other form (primitive ↔ constructed), as BER allows for strings.
    @inlinable
    public var toggledForm: ASN1Tag { ASN1Tag(tagClass, number: number, constructed: !isConstructed) }

    /// The identifier octet of a tag whose number is below 31 (X.690 §8.1.2.2); nil for higher numbers, which
    /// take more octets.
    @inlinable
    public var singleOctetIdentifier: UInt8? {
        guard number < 0x1F else { return nil }
        return tagClass.rawValue << 6 | (isConstructed ? 0x20 : 0) | UInt8(number)
    }

    public var description: String {
        let name: String
        switch (tagClass, number) {
        case (.universal, 1): name = "BOOLEAN"
        case (.universal, 2): name = "INTEGER"
        case (.universal, 3): name = "BIT STRING"
        case (.universal, 4): name = "OCTET STRING"
        case (.universal, 5): name = "NULL"
        case (.universal, 6): name = "OBJECT IDENTIFIER"
        case (.universal, 12): name = "UTF8String"
        case (.universal, 16): name = "SEQUENCE"
        case (.universal, 17): name = "SET"
        case (.universal, 19): name = "PrintableString"
        case (.universal, 22): name = "IA5String"
        case (.universal, 23): name = "UTCTime"
        case (.universal, 24): name = "GeneralizedTime"
        case (.universal, _): name = "UNIVERSAL \(number)"
        case (.application, _): name = "[APPLICATION \(number)]"
        case (.contextSpecific, _): name = "[\(number)]"
        case (.private, _): name = "[PRIVATE \(number)]"
        }
        let expectedForm = tagClass == .universal && (number == 16 || number == 17)
        if tagClass == .universal && isConstructed != expectedForm {
            return name + (isConstructed ? " (constructed)" : " (primitive)")
        }
        return name
    }
}
