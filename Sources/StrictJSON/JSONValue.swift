/// A JSON document (RFC 8259) that keeps what generic decoders lose: the order of object members and the exact
/// text of numbers, so 64-bit identifiers survive and output is stable.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    /// A number, kept as its literal text (always valid RFC 8259 number syntax).
    case number(String)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// A number from an integer, written exactly.
    public static func integer<T: BinaryInteger>(_ value: T) -> JSONValue { .number(String(value)) }

    /// The member called `key` when this is an object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// A short name for the kind of value, for error messages.
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// A JSON object whose members keep the order they were added or parsed in. Keys are unique.
public struct JSONObject: Hashable, Sendable {
    public struct Member: Hashable, Sendable {
        public let key: String
        public let value: JSONValue
    }

    public private(set) var members: [Member] = []

    public init() {}

    public init(_ members: KeyValuePairs<String, JSONValue>) {
        for (key, value) in members { self[key] = value }
    }

    public var keys: [String] { members.map(\.key) }

    /// Reads a member; setting replaces it in place, appends it when new, or removes it when nil.
    public subscript(key: String) -> JSONValue? {
        get { members.first(where: { $0.key == key })?.value }
        set {
            let index = members.firstIndex(where: { $0.key == key })
            switch (index, newValue) {
            case (let index?, let value?): members[index] = Member(key: key, value: value)
            case (let index?, nil): members.remove(at: index)
            case (nil, let value?): members.append(Member(key: key, value: value))
            case (nil, nil): break
            }
        }
    }
}
