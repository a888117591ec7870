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
///
/// Reading, adding or replacing a member takes constant time on average, whatever the size of the object; removing
/// one takes time in proportion to the members after it. Two objects are equal when they have the same members in
/// the same order.
public struct JSONObject: Hashable, Sendable {
    public struct Member: Hashable, Sendable {
        public let key: String
        public let value: JSONValue
    }

    /// Up to this many members, a key is found by comparing it with each member's; past it, through `positions`.
    /// Below about 30 members, comparing keys costs no more than hashing them and keeping the index, and most
    /// objects are this small.
    static let indexThreshold = 16

    public private(set) var members: [Member] = []
    /// Where each key is in `members`: empty while there are at most `indexThreshold` members, every key after.
    private var positions: [String: Int] = [:]

    public init() {}

    public init(_ members: KeyValuePairs<String, JSONValue>) {
        for (key, value) in members { self[key] = value }
    }

    public var keys: [String] { members.map(\.key) }

    /// Reads a member; setting replaces it in place, appends it when new, or removes it when nil.
    public subscript(key: String) -> JSONValue? {
        get {
            var probes = 0
            return position(of: key, probes: &probes).map { members[$0].value }
        }
        set {
            var probes = 0
            setValue(newValue, forKey: key, probes: &probes)
        }
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool { lhs.members == rhs.members }

    public func hash(into hasher: inout Hasher) { hasher.combine(members) }

    // The methods below add to `probes` one for every key they compare or look up in `positions`: the work that
    // tests count to show that it stays in proportion to the members added, whatever the size of the object.

    /// Where the member called `key` is in `members`, or nil when there is none.
    func position(of key: String, probes: inout Int) -> Int? {
        guard positions.isEmpty else {
            probes += 1
            return positions[key]
        }
        for position in members.indices {
            probes += 1
            if members[position].key == key { return position }
        }
        return nil
    }

    /// What the subscript's setter does.
    mutating func setValue(_ value: JSONValue?, forKey key: String, probes: inout Int) {
        switch (position(of: key, probes: &probes), value) {
        case (let position?, let value?): members[position] = Member(key: key, value: value)
        case (let position?, nil): removeMember(at: position, probes: &probes)
        case (nil, let value?): append(newKey: key, value: value, probes: &probes)
        case (nil, nil): break
        }
    }

    /// Appends a member whose key the object does not have yet (the caller has checked).
    mutating func append(newKey key: String, value: JSONValue, probes: inout Int) {
        members.append(Member(key: key, value: value))
        if !positions.isEmpty {
            probes += 1
            positions[key] = members.count - 1
        } else if members.count > Self.indexThreshold {
            indexPositions(from: 0, probes: &probes)
        }
    }

    private mutating func removeMember(at position: Int, probes: inout Int) {
        let key = members.remove(at: position).key
        guard members.count > Self.indexThreshold else {
            positions = [:]
            return
        }
        probes += 1
        positions[key] = nil
        indexPositions(from: position, probes: &probes)
    }

    /// Records in `positions` where the members from `start` on are.
    private mutating func indexPositions(from start: Int, probes: inout Int) {
        positions.reserveCapacity(members.count)
        for position in start..<members.count {
            probes += 1
            positions[members[position].key] = position
        }
    }
}
