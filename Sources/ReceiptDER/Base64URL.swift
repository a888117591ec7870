/// The URL-safe base64 alphabet without padding (RFC 4648 §5, as RFC 7515 §2 uses it for JWS).
///
/// Decoding is strict, so that every accepted text is the one canonical encoding of its bytes: only the 64
/// characters of the alphabet, no `=` padding, no whitespace, a length that is not 1 modulo 4, and zero bits in
/// the unused low bits of the last character. Apple emits exactly this form.
public enum Base64URL {
    /// Why a text is not strict unpadded base64url.
    public struct DecodingError: Error, Hashable, Sendable, CustomStringConvertible {
        public enum Reason: Hashable, Sendable {
            /// A byte outside the base64url alphabet (which includes `=`, `+`, `/` and whitespace).
            case invalidCharacter(UInt8)
            /// A length of 1 modulo 4, which no byte string encodes to.
            case invalidLength
            /// Unused low bits of the last character that are not zero.
            case nonCanonical
        }

        public let reason: Reason
        /// Offset of the offending byte in the text.
        public let offset: Int

        public var description: String {
            switch reason {
            case .invalidCharacter(UInt8(ascii: "=")):
                return "'=' padding at offset \(offset) (base64url in JWS carries no padding)"
            case .invalidCharacter(let byte):
                let shown =
                    (0x21...0x7E).contains(byte)
                    ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16, uppercase: true))"
                return "\(shown) at offset \(offset) is not in the base64url alphabet"
            case .invalidLength: return "a base64url text of \(offset) characters (1 modulo 4) encodes no bytes"
            case .nonCanonical: return "the last base64url character (offset \(offset)) has non-zero unused bits"
            }
        }
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        return table
    }()

    /// Encodes `bytes` without padding.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        String(decoding: encodedBytes(bytes), as: UTF8.self)
    }

    /// ``encode(_:)`` as ASCII bytes.
    public static func encodedBytes(_ bytes: some Collection<UInt8>) -> [UInt8] {
        Base64.encode(bytes, alphabet: alphabet, padded: false)
    }

    /// Decodes strict unpadded base64url (see the type's description for what is refused).
    public static func decode(_ text: some Collection<UInt8>) throws(DecodingError) -> [UInt8] {
        let input = Array(text)
        guard input.count % 4 != 1 else { throw DecodingError(reason: .invalidLength, offset: input.count) }
        var output: [UInt8] = []
        output.reserveCapacity(input.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for (offset, byte) in input.enumerated() {
            let value = values[Int(byte)]
            guard value != 0xFF else { throw DecodingError(reason: .invalidCharacter(byte), offset: offset) }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        // Whatever is left (2 or 4 bits) must be zero for the text to be the canonical encoding.
        guard accumulator == 0 else { throw DecodingError(reason: .nonCanonical, offset: input.count - 1) }
        return output
    }
}
