import ReceiptModel
import StrictJSON

/// Reads the documented fields of one JSON object with their documented JSON types, naming the field in every error
/// (`payload.purchaseDate`, `payload.data.bundleId`…), over StrictJSON's reader. A member that is absent or `null`
/// reads as nil; a member of another type is an error, never silently dropped.
struct PayloadFields {
    let reader: JSONObjectReader

    /// `path` names the object in errors: `payload`, `payload.data`…
    init(_ object: JSONObject, path: String) {
        reader = JSONObjectReader(object, path: path)
    }

    func string(_ key: String) throws(JWSError) -> String? {
        try Self.reading { () throws(JSONFieldError) in try reader.string(key) }
    }

    func bool(_ key: String) throws(JWSError) -> Bool? {
        try Self.reading { () throws(JSONFieldError) in try reader.bool(key) }
    }

    /// An integer written without fraction or exponent that fits 64 bits.
    func integer(_ key: String) throws(JWSError) -> Int64? {
        try Self.reading { () throws(JSONFieldError) in try reader.integer(key, in: Int64.min...Int64.max) }
    }

    /// Milliseconds since 1970 (Apple's JWS dates; Xcode writes them with a fraction, which is truncated downward).
    func date(_ key: String) throws(JWSError) -> ReceiptDate? {
        guard let found = reader.value(key) else { return nil }
        guard case .number(let text) = found else {
            throw Self.invalid(
                reader.error(key, "must be a number of milliseconds since 1970, found \(found.kindName)"))
        }
        guard let milliseconds = Self.milliseconds(text) else {
            throw Self.invalid(reader.error(key, "must be milliseconds since 1970 within ±2^53, found \(text)"))
        }
        return ReceiptDate(millisecondsSince1970: milliseconds)
    }

    func strings(_ key: String) throws(JWSError) -> [String]? {
        try Self.reading { () throws(JSONFieldError) in try reader.strings(key) }
    }

    func object(_ key: String) throws(JWSError) -> JSONObject? {
        try Self.reading { () throws(JSONFieldError) in try reader.object(key)?.object }
    }

    /// The members whose keys are not in `known`, in payload order.
    func unknownMembers(known: Set<String>) -> JSONObject { reader.unknownMembers(known: known) }

    /// The whole milliseconds (rounded toward minus infinity) of a JSON number's text: exact for integers, through
    /// a double for fractions and exponents (exact below 2^53, which covers every date to the year 285,000).
    static func milliseconds(_ text: String) -> Int64? {
        if let exact = Int64(text) { return exact }
        guard let value = Double(text), value.isFinite else { return nil }
        let floored = value.rounded(.down)
        guard abs(floored) <= 9_007_199_254_740_992 else { return nil }
        return Int64(floored)
    }

    private static func invalid(_ error: JSONFieldError) -> JWSError { JWSError(.invalidPayload, "\(error)") }

    /// Runs `body`, reporting its error as an invalid payload.
    private static func reading<T>(_ body: () throws(JSONFieldError) -> T) throws(JWSError) -> T {
        do {
            return try body()
        } catch {
            throw invalid(error)
        }
    }
}
