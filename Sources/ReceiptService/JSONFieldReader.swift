import StrictJSON

/// A member of a JSON document that breaks a rule: where it is (`limits.max_body_bytes`) and what is wrong.
struct FieldError: Error, Hashable, Sendable, CustomStringConvertible {
    let path: String
    let rule: String

    var description: String { path.isEmpty ? rule : "\(path): \(rule)" }
}

/// Typed, path-aware reading of one JSON object's members, refusing keys it was not told about.
struct JSONFieldReader {
    let object: JSONObject
    let prefix: String

    /// Requires `value` to be an object; its members are named under `path` in errors.
    init(_ value: JSONValue, path: String = "") throws(FieldError) {
        guard case .object(let object) = value else {
            throw FieldError(path: path, rule: "must be a JSON object, found \(value.kindName)")
        }
        self.object = object
        self.prefix = path
    }

    func path(_ key: String) -> String { prefix.isEmpty ? key : "\(prefix).\(key)" }

    func rejectUnknownKeys(allowed: Set<String>) throws(FieldError) {
        if let key = object.keys.first(where: { !allowed.contains($0) }) {
            throw FieldError(
                path: path(key), rule: "is not a known key (known: \(allowed.sorted().joined(separator: ", ")))")
        }
    }

    /// The member, with `null` treated as absent.
    func value(_ key: String) -> JSONValue? {
        guard let value = object[key], value != .null else { return nil }
        return value
    }

    func string(_ key: String) throws(FieldError) -> String? {
        guard let value = value(key) else { return nil }
        guard case .string(let text) = value else {
            throw FieldError(path: path(key), rule: "must be a string, found \(value.kindName)")
        }
        return text
    }

    func requiredString(_ key: String) throws(FieldError) -> String {
        guard let text = try string(key) else { throw FieldError(path: path(key), rule: "is required") }
        guard !text.isEmpty else { throw FieldError(path: path(key), rule: "must not be empty") }
        return text
    }

    func bool(_ key: String) throws(FieldError) -> Bool? {
        guard let value = value(key) else { return nil }
        guard case .bool(let flag) = value else {
            throw FieldError(path: path(key), rule: "must be true or false, found \(value.kindName)")
        }
        return flag
    }

    /// An integer member within `range`.
    func integer(_ key: String, in range: ClosedRange<Int>) throws(FieldError) -> Int? {
        guard let value = value(key) else { return nil }
        guard case .number(let text) = value, let number = Int(text) else {
            throw FieldError(path: path(key), rule: "must be an integer, found \(value.kindName) \(value.serialized())")
        }
        guard range.contains(number) else {
            throw FieldError(
                path: path(key), rule: "must be between \(range.lowerBound) and \(range.upperBound), found \(number)")
        }
        return number
    }

    func array(_ key: String) throws(FieldError) -> [JSONValue]? {
        guard let value = value(key) else { return nil }
        guard case .array(let elements) = value else {
            throw FieldError(path: path(key), rule: "must be an array, found \(value.kindName)")
        }
        return elements
    }

    /// An array of strings.
    func strings(_ key: String) throws(FieldError) -> [String]? {
        guard let elements = try array(key) else { return nil }
        var strings: [String] = []
        for (index, element) in elements.enumerated() {
            guard case .string(let text) = element else {
                throw FieldError(path: "\(path(key))[\(index)]", rule: "must be a string, found \(element.kindName)")
            }
            strings.append(text)
        }
        return strings
    }

    func object(_ key: String) throws(FieldError) -> JSONFieldReader? {
        guard let value = value(key) else { return nil }
        return try JSONFieldReader(value, path: path(key))
    }
}
