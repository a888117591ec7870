/// Takes the members of one JSON object, in order: a ``JSONObject`` keeps them as a tree, a ``JSONObjectWriter``
/// writes their compact text at once. An object described once, against this protocol, comes out of both with the
/// same members in the same order, and the writer's bytes are those ``JSONValue/write(to:pretty:)`` writes for the
/// tree.
///
/// Each key is added at most once per object: a builder does not look for an earlier member with the same key.
/// Keys are ``JSONKey``s, made once for objects written often; every method also takes a `String` key, scanned
/// for escapes at each member.
public protocol JSONObjectBuilder {
    /// Adds the member `key` with `value`.
    mutating func add(_ key: JSONKey, _ value: JSONValue)

    /// Adds the member `key` with the string `value`.
    mutating func add(_ key: JSONKey, string value: String)

    /// Adds the member `key` with the number `value`.
    mutating func add(_ key: JSONKey, integer value: Int64)

    /// Adds the member `key` with a string of exactly `count` bytes, which `write` appends: printable ASCII
    /// other than `"` and `\`, so that none needs an escape (a date, a number in text).
    mutating func add(_ key: JSONKey, asciiCount count: Int, _ write: (inout OutputSpan<UInt8>) -> Void)

    /// Adds the member `key` with an object whose members `build` adds to the builder it is given.
    mutating func addObject(_ key: JSONKey, _ build: (inout Self) -> Void)

    /// Adds the member `key` with an array of `count` objects: `build` adds the members of each to the builder it
    /// is given, with the object's position, 0 to `count - 1`, in order. The caller reads its elements in place
    /// (an array's element by its index), where iterating a sequence through a generic function copies each one.
    mutating func addObjects(_ key: JSONKey, count: Int, _ build: (Int, inout Self) -> Void)
}

extension JSONObjectBuilder {
    /// Adds the member `key` with the string `value`; nothing when `value` is nil.
    public mutating func add(_ key: JSONKey, string value: String?) {
        if let value { add(key, string: value) }
    }

    /// Adds the member `key` with the number `value`; nothing when `value` is nil.
    public mutating func add(_ key: JSONKey, integer value: Int64?) {
        if let value { add(key, integer: value) }
    }

    /// Adds the member `key` with `value`; nothing when `value` is nil.
    public mutating func add(_ key: JSONKey, _ value: JSONValue?) {
        if let value { add(key, value) }
    }
}

/// The same with the key given as a `String`.
extension JSONObjectBuilder {
    public mutating func add(_ key: String, _ value: JSONValue) {
        add(JSONKey(string: key), value)
    }

    public mutating func add(_ key: String, string value: String) {
        add(JSONKey(string: key), string: value)
    }

    public mutating func add(_ key: String, integer value: Int64) {
        add(JSONKey(string: key), integer: value)
    }

    public mutating func add(_ key: String, asciiCount count: Int, _ write: (inout OutputSpan<UInt8>) -> Void) {
        add(JSONKey(string: key), asciiCount: count, write)
    }

    public mutating func addObject(_ key: String, _ build: (inout Self) -> Void) {
        addObject(JSONKey(string: key), build)
    }

    public mutating func addObjects(_ key: String, count: Int, _ build: (Int, inout Self) -> Void) {
        addObjects(JSONKey(string: key), count: count, build)
    }

    public mutating func add(_ key: String, string value: String?) {
        if let value { add(key, string: value) }
    }

    public mutating func add(_ key: String, integer value: Int64?) {
        if let value { add(key, integer: value) }
    }

    public mutating func add(_ key: String, _ value: JSONValue?) {
        if let value { add(key, value) }
    }

    /// Adds the member `key` with an array of objects: one per element of `elements`, in order, whose members
    /// `build` adds to the builder it is given.
    public mutating func addObjects<Elements: Collection>(
        _ key: String, _ elements: Elements, _ build: (Elements.Element, inout Self) -> Void
    ) {
        var index = elements.startIndex
        addObjects(key, count: elements.count) { _, object in
            build(elements[index], &object)
            index = elements.index(after: index)
        }
    }
}

extension JSONObject: JSONObjectBuilder {
    /// The object whose members `build` adds.
    public init(building build: (inout JSONObject) -> Void) {
        self.init()
        build(&self)
    }

    public mutating func add(_ key: JSONKey, _ value: JSONValue) {
        self[key.name] = value
    }

    public mutating func add(_ key: JSONKey, string value: String) {
        self[key.name] = .string(value)
    }

    public mutating func add(_ key: JSONKey, integer value: Int64) {
        self[key.name] = .integer(value)
    }

    public mutating func add(_ key: JSONKey, asciiCount count: Int, _ write: (inout OutputSpan<UInt8>) -> Void) {
        self[key.name] = .string(String(decoding: [UInt8](capacity: count, initializingWith: write), as: UTF8.self))
    }

    public mutating func addObject(_ key: JSONKey, _ build: (inout JSONObject) -> Void) {
        var object = JSONObject()
        build(&object)
        self[key.name] = .object(object)
    }

    public mutating func addObjects(_ key: JSONKey, count: Int, _ build: (Int, inout JSONObject) -> Void) {
        self[key.name] = .array(
            (0..<count).map { position in
                var object = JSONObject()
                build(position, &object)
                return .object(object)
            })
    }
}

/// Writes one JSON object's compact text as its members are added, with no tree in between: the bytes
/// ``JSONValue/write(to:pretty:)`` writes for the same members, without `pretty`.
public struct JSONObjectWriter: JSONObjectBuilder {
    private var output: [UInt8]
    /// Whether the innermost object being written has no member yet.
    private var empty = true

    private init(output: [UInt8]) {
        self.output = output
    }

    /// Appends to `output` the object whose members `build` adds, leaving what `output` holds untouched.
    public static func write(to output: inout [UInt8], _ build: (inout JSONObjectWriter) -> Void) {
        var writer = JSONObjectWriter(output: [])
        swap(&writer.output, &output)
        writer.output.append(UInt8(ascii: "{"))
        build(&writer)
        writer.output.append(UInt8(ascii: "}"))
        swap(&writer.output, &output)
    }

    public mutating func add(_ key: JSONKey, _ value: JSONValue) {
        writeKey(key)
        value.write(to: &output)
    }

    public mutating func add(_ key: JSONKey, string value: String) {
        // Text that needs no escape (most of it) is written with its key in one piece.
        let written = value.utf8.withContiguousStorageIfAvailable { bytes in
            guard JSONStringWriter.nextEscape(in: bytes, from: 0) == nil else { return false }
            key.write(to: &output, first: empty, then: bytes.count + 2) { span in
                span.append(UInt8(ascii: "\""))
                span.append(copying: bytes)
                span.append(UInt8(ascii: "\""))
            }
            return true
        }
        if written != true {
            key.write(to: &output, first: empty)
            JSONStringWriter.write(value, to: &output)
        }
        empty = false
    }

    public mutating func add(_ key: JSONKey, integer value: Int64) {
        key.write(to: &output, first: empty, then: value.decimalCount) { value.appendDecimal(to: &$0) }
        empty = false
    }

    public mutating func add(_ key: JSONKey, asciiCount count: Int, _ write: (inout OutputSpan<UInt8>) -> Void) {
        key.write(to: &output, first: empty, then: count + 2) { span in
            span.append(UInt8(ascii: "\""))
            let start = span.count
            write(&span)
            assert(
                (start..<span.count).allSatisfy { !JSONStringWriter.needsEscape(span[$0]) }, "text that needs escapes")
            span.append(UInt8(ascii: "\""))
        }
        empty = false
    }

    public mutating func addObject(_ key: JSONKey, _ build: (inout JSONObjectWriter) -> Void) {
        writeKey(key)
        writeObject(build)
    }

    public mutating func addObjects(_ key: JSONKey, count: Int, _ build: (Int, inout JSONObjectWriter) -> Void) {
        writeKey(key)
        output.append(UInt8(ascii: "["))
        for position in 0..<count {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            writeObject { build(position, &$0) }
        }
        output.append(UInt8(ascii: "]"))
    }

    /// `,` unless this is the object's first member, then `"key":`.
    private mutating func writeKey(_ key: JSONKey) {
        key.write(to: &output, first: empty)
        empty = false
    }

    /// `{`, the members `build` adds, `}`; the enclosing object's state is kept across it.
    private mutating func writeObject(_ build: (inout JSONObjectWriter) -> Void) {
        output.append(UInt8(ascii: "{"))
        empty = true
        build(&self)
        output.append(UInt8(ascii: "}"))
        empty = false
    }
}
