/// A value of an old-style (NeXTSTEP / OpenStep) ASCII property list: a string, an array or a dictionary.
///
/// The format has no numbers, booleans or dates of its own: everything that is not a container is a string, and
/// what a string means is up to the reader. `<hex>` data values exist in the format but are not supported here.
public enum PropertyListValue: Hashable, Sendable {
    case string(String)
    case array([PropertyListValue])
    case dictionary(PropertyListDictionary)

    /// The text when this is a string.
    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The dictionary when this is one.
    public var dictionaryValue: PropertyListDictionary? {
        if case .dictionary(let dictionary) = self { return dictionary }
        return nil
    }

    /// The elements when this is an array.
    public var arrayValue: [PropertyListValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// A short name for the kind of value, for error messages.
    public var kindName: String {
        switch self {
        case .string: "a string"
        case .array: "an array"
        case .dictionary: "a dictionary"
        }
    }
}

/// A property-list dictionary: string keys, each once, in the order they were written.
///
/// Keys compare as Swift strings do (canonical Unicode equivalence), so two keys that differ only in how an accented
/// letter is composed count as the same key.
public struct PropertyListDictionary: Hashable, Sendable, RandomAccessCollection {
    public struct Entry: Hashable, Sendable {
        public let key: String
        public let value: PropertyListValue

        public init(key: String, value: PropertyListValue) {
            self.key = key
            self.value = value
        }
    }

    /// The entries in order.
    public private(set) var entries: [Entry] = []
    private var positions: [String: Int] = [:]

    public init() {}

    /// A dictionary of `entries`, or nil when a key appears twice.
    public init?(_ entries: [Entry]) {
        for entry in entries {
            guard insert(key: entry.key, value: entry.value) else { return nil }
        }
    }

    /// Appends `key = value` and returns true, or returns false (changing nothing) when `key` is already present.
    @discardableResult
    public mutating func insert(key: String, value: PropertyListValue) -> Bool {
        guard positions[key] == nil else { return false }
        positions[key] = entries.count
        entries.append(Entry(key: key, value: value))
        return true
    }

    /// Whether `key` is present.
    public func contains(key: String) -> Bool { positions[key] != nil }

    /// The value for `key`.
    public subscript(key: String) -> PropertyListValue? {
        positions[key].map { entries[$0].value }
    }

    /// The keys in order.
    public var keys: [String] { entries.map(\.key) }

    public var startIndex: Int { entries.startIndex }
    public var endIndex: Int { entries.endIndex }
    public subscript(position: Int) -> Entry { entries[position] }

    public static func == (lhs: PropertyListDictionary, rhs: PropertyListDictionary) -> Bool {
        lhs.entries == rhs.entries
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(entries) }
}
