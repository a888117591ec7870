import ReceiptModel
import StrictJSON

/// Reads the documented fields of one JSON object with their documented JSON types, naming the field in every error
/// (`payload.purchaseDate`, `payload.data.bundleId`…). A member that is absent or `null` reads as nil; a member of
/// another type is an error, never silently dropped.
struct PayloadFields {
    let object: JSONObject
    /// How errors name the object: `payload`, `payload.data`…
    let path: String

    init(_ object: JSONObject, path: String) {
        self.object = object
        self.path = path
    }

    /// The member, or nil when it is absent or `null`.
    private func value(_ key: String) -> JSONValue? {
        guard let value = object[key], value != .null else { return nil }
        return value
    }

    private func invalid(_ field: String, _ rule: String) -> JWSError {
        JWSError(.invalidPayload, "\(path).\(field) \(rule)")
    }

    private func wrongType(_ key: String, _ found: JSONValue, expected: String) -> JWSError {
        invalid(key, "is \(found.kindName); expected \(expected)")
    }

    func string(_ key: String) throws(JWSError) -> String? {
        guard let found = value(key) else { return nil }
        guard case .string(let text) = found else { throw wrongType(key, found, expected: "a string") }
        return text
    }

    func bool(_ key: String) throws(JWSError) -> Bool? {
        guard let found = value(key) else { return nil }
        guard case .bool(let flag) = found else { throw wrongType(key, found, expected: "a boolean") }
        return flag
    }

    /// An integer written without fraction or exponent that fits 64 bits.
    func integer(_ key: String) throws(JWSError) -> Int64? {
        guard let found = value(key) else { return nil }
        guard case .number(let text) = found else { throw wrongType(key, found, expected: "an integer") }
        guard let integer = Int64(text) else { throw invalid(key, "is \(text); expected an integer of 64 bits") }
        return integer
    }

    /// Milliseconds since 1970 (Apple's JWS dates; Xcode writes them with a fraction, which is truncated downward).
    func date(_ key: String) throws(JWSError) -> ReceiptDate? {
        guard let found = value(key) else { return nil }
        guard case .number(let text) = found else {
            throw wrongType(key, found, expected: "a number of milliseconds since 1970")
        }
        guard let milliseconds = Self.milliseconds(text) else {
            throw invalid(key, "is \(text); expected milliseconds since 1970 within ±2^53")
        }
        return ReceiptDate(millisecondsSince1970: milliseconds)
    }

    func strings(_ key: String) throws(JWSError) -> [String]? {
        guard let found = value(key) else { return nil }
        guard case .array(let elements) = found else { throw wrongType(key, found, expected: "an array of strings") }
        var strings: [String] = []
        for (index, element) in elements.enumerated() {
            guard case .string(let text) = element else {
                throw invalid("\(key)[\(index)]", "is \(element.kindName); expected a string")
            }
            strings.append(text)
        }
        return strings
    }

    func object(_ key: String) throws(JWSError) -> JSONObject? {
        guard let found = value(key) else { return nil }
        guard case .object(let member) = found else { throw wrongType(key, found, expected: "an object") }
        return member
    }

    /// The members whose keys are not in `known`, in payload order.
    func unknownMembers(known: Set<String>) -> JSONObject {
        var unknown = JSONObject()
        for member in object.members where !known.contains(member.key) { unknown[member.key] = member.value }
        return unknown
    }

    /// The whole milliseconds (rounded toward minus infinity) of a JSON number's text: exact for integers, through
    /// a double for fractions and exponents (exact below 2^53, which covers every date to the year 285,000).
    static func milliseconds(_ text: String) -> Int64? {
        if let exact = Int64(text) { return exact }
        guard let value = Double(text), value.isFinite else { return nil }
        let floored = value.rounded(.down)
        guard abs(floored) <= 9_007_199_254_740_992 else { return nil }
        return Int64(floored)
    }
}
