/// A member of a JSON document that breaks a rule: where it is (`products[0].rank`, `limits.threads`) and what is
/// wrong (`must be a string, found a number`).
public struct JSONFieldError: Error, Hashable, Sendable, CustomStringConvertible {
    public let path: String
    public let rule: String

    public init(path: String, rule: String) {
        self.path = path
        self.rule = rule
    }

    public var description: String { path.isEmpty ? rule : "\(path): \(rule)" }
}

/// Reads the members of one JSON object by type, naming the member in every error. A member that is absent or
/// `null` reads as nil; a member of another type is an error, never silently dropped. Reading one member takes
/// constant time, whatever the size of the object.
public struct JSONObjectReader: Sendable {
    public let object: JSONObject
    /// How errors name this object (empty for the document itself).
    public let path: String

    /// Requires `value` to be an object, whose members are named under `path` in errors.
    public init(_ value: JSONValue, path: String = "") throws(JSONFieldError) {
        guard case .object(let object) = value else {
            throw JSONFieldError(path: path, rule: "must be a JSON object, found \(value.kindName)")
        }
        self.init(object, path: path)
    }

    public init(_ object: JSONObject, path: String = "") {
        self.object = object
        self.path = path
    }

    /// How errors name the member `key`.
    public func path(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// The error for member `key` breaking `rule`.
    public func error(_ key: String, _ rule: String) -> JSONFieldError { JSONFieldError(path: path(key), rule: rule) }

    /// Refuses the first member whose key is not `allowed`, listing the known keys.
    public func rejectUnknownKeys(allowed: Set<String>) throws(JSONFieldError) {
        if let key = object.keys.first(where: { !allowed.contains($0) }) {
            throw error(key, "is not a known key (known: \(allowed.sorted().joined(separator: ", ")))")
        }
    }

    /// The members whose keys are not in `known`, in document order.
    public func unknownMembers(known: Set<String>) -> JSONObject {
        var unknown = JSONObject()
        for member in object.members where !known.contains(member.key) { unknown[member.key] = member.value }
        return unknown
    }

    /// The member, with `null` treated as absent.
    public func value(_ key: String) -> JSONValue? {
        guard let value = object[key], value != .null else { return nil }
        return value
    }

    public func string(_ key: String) throws(JSONFieldError) -> String? {
        guard let value = value(key) else { return nil }
        guard case .string(let text) = value else { throw error(key, "must be a string, found \(value.kindName)") }
        return text
    }

    /// A string that must be present and not empty.
    public func requiredString(_ key: String) throws(JSONFieldError) -> String {
        guard let text = try string(key) else { throw error(key, "is required") }
        guard !text.isEmpty else { throw error(key, "must not be empty") }
        return text
    }

    public func bool(_ key: String) throws(JSONFieldError) -> Bool? {
        guard let value = value(key) else { return nil }
        guard case .bool(let flag) = value else { throw error(key, "must be true or false, found \(value.kindName)") }
        return flag
    }

    /// A number written as an integer (no fraction, no exponent) within `range`.
    public func integer<T: FixedWidthInteger>(_ key: String, in range: ClosedRange<T>) throws(JSONFieldError) -> T? {
        guard let value = value(key) else { return nil }
        guard case .number(let text) = value, let number = T(text) else {
            throw error(key, "must be an integer, found \(value.kindName) \(value.serialized())")
        }
        guard range.contains(number) else {
            throw error(key, "must be between \(range.lowerBound) and \(range.upperBound), found \(number)")
        }
        return number
    }

    public func array(_ key: String) throws(JSONFieldError) -> [JSONValue]? {
        guard let value = value(key) else { return nil }
        guard case .array(let elements) = value else { throw error(key, "must be an array, found \(value.kindName)") }
        return elements
    }

    /// An array of strings.
    public func strings(_ key: String) throws(JSONFieldError) -> [String]? {
        guard let elements = try array(key) else { return nil }
        var strings: [String] = []
        for (index, element) in elements.enumerated() {
            guard case .string(let text) = element else {
                throw JSONFieldError(
                    path: "\(path(key))[\(index)]", rule: "must be a string, found \(element.kindName)")
            }
            strings.append(text)
        }
        return strings
    }

    /// The member as an object, read under its own path.
    public func object(_ key: String) throws(JSONFieldError) -> JSONObjectReader? {
        guard let value = value(key) else { return nil }
        return try JSONObjectReader(value, path: path(key))
    }
}
