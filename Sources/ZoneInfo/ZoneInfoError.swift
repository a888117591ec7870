/// Why a time zone could not be loaded: a stable code to switch on, and a message that names the zone or file, the
/// field and the rule.
public struct ZoneInfoError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The closed set of failure codes. Their raw values are stable and may appear in output.
    public enum Code: String, CaseIterable, Sendable {
        /// The zone name is empty, absolute, has an empty, `.` or `..` component, or a character outside the
        /// database's portable set (letters, digits, `/`, `_`, `-`, `+`, `.`).
        case invalidName = "invalid_name"
        /// No time zone file of that name exists in the database directory (or it names a directory).
        case notFound = "not_found"
        /// The file exists but could not be read (permissions, an I/O error, not a regular file).
        case unreadable
        /// The file is larger than ``TimeZoneRules/maximumFileSize``.
        case tooLarge = "too_large"
        /// Not a TZif file this reader accepts, or not a POSIX TZ string: the message names the field and the rule.
        case malformed
        /// A valid TZif file this reader does not interpret: leap-second records (the `right/` zones), or a format
        /// version after 4.
        case unsupported
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }

    /// The same error with `context` (a zone name, a file path) put in front of the message.
    func within(_ context: String) -> ZoneInfoError {
        ZoneInfoError(code, context + ": " + message)
    }

    /// `bytes` as text for a message: printable ASCII as is, `"` and `\` escaped, anything else as `\xNN`.
    static func quoted(_ bytes: some Sequence<UInt8>) -> String {
        var text = "\""
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): text += "\\" + String(Unicode.Scalar(byte))
            case 0x20...0x7E: text += String(Unicode.Scalar(byte))
            default: text += "\\x" + hex(byte).dropFirst(2)
            }
        }
        return text + "\""
    }
}

/// `0x` and two uppercase hex digits.
func hex(_ byte: UInt8) -> String {
    let digits = String(byte, radix: 16, uppercase: true)
    return "0x" + (digits.count == 1 ? "0" + digits : digits)
}
