import StrictJSON
import Testing

/// Adds the members of `object` to `builder` the way code that describes an object does: nested objects and
/// arrays of objects through the builder, strings and integers as such, anything else as a value.
private func add<Builder: JSONObjectBuilder>(_ object: JSONObject, to builder: inout Builder) {
    for member in object.members {
        switch member.value {
        case .object(let nested): builder.addObject(member.key) { add(nested, to: &$0) }
        case .array(let elements) where !elements.isEmpty && elements.allSatisfy(\.isObject):
            builder.addObjects(member.key, elements.compactMap(\.objectValue)) { add($0, to: &$1) }
        case .string(let text): builder.add(member.key, string: text)
        case .number(let text) where Int64(text).map(String.init) == text:
            builder.add(member.key, integer: Int64(text))
        default: builder.add(member.key, member.value)
        }
    }
}

extension JSONValue {
    fileprivate var isObject: Bool { objectValue != nil }

    fileprivate var objectValue: JSONObject? {
        if case .object(let object) = self { object } else { nil }
    }
}

/// ``add(_:to:)`` with every key made once as a ``JSONKey``, as code that writes an object often does.
private func addWithKeys<Builder: JSONObjectBuilder>(_ object: JSONObject, to builder: inout Builder) {
    for member in object.members {
        let key = JSONKey(string: member.key)
        switch member.value {
        case .object(let nested): builder.addObject(key) { addWithKeys(nested, to: &$0) }
        case .array(let elements) where !elements.isEmpty && elements.allSatisfy(\.isObject):
            let objects = elements.compactMap(\.objectValue)
            builder.addObjects(key, count: objects.count) { addWithKeys(objects[$0], to: &$1) }
        case .string(let text): builder.add(key, string: text)
        case .number(let text) where Int64(text).map(String.init) == text:
            builder.add(key, integer: Int64(text))
        default: builder.add(key, member.value)
        }
    }
}

/// Records an issue at the caller unless `object`, added member by member, comes out of a ``JSONObjectWriter`` as
/// the bytes the tree is written as, appended after what the buffer held, and out of a ``JSONObject`` equal to it.
private func expectSameOutput(_ object: JSONObject, sourceLocation: SourceLocation = #_sourceLocation) {
    var written = Array("prefix".utf8)
    JSONObjectWriter.write(to: &written) { add(object, to: &$0) }
    #expect(
        written == Array("prefix".utf8) + JSONValue.object(object).serializedBytes(), sourceLocation: sourceLocation)
    var built = JSONObject()
    add(object, to: &built)
    #expect(built == object, sourceLocation: sourceLocation)
}

@Suite("JSON output written as members are added, without a tree")
struct JSONObjectWriterTests {
    @Test(
        "every JSON object of the repository, added member by member, is written as its tree is",
        arguments: RepositoryJSON.vectors.filter { $0.value.isObject })
    func repositoryObject(_ vector: JSONVector) throws {
        expectSameOutput(try #require(vector.value.objectValue))
    }

    @Test("the tricky document of the writer's tests, added member by member, is written as its tree is")
    func trickyDocumentObject() throws {
        expectSameOutput(JSONObject(["document": trickyDocument, "again": trickyDocument]))
    }

    @Test(
        "keys made once (JSONKey) are written as String keys are, escapes and first members included",
        arguments: RepositoryJSON.vectors.filter { $0.value.isObject })
    func keysMadeOnce(_ vector: JSONVector) throws {
        let object = try #require(vector.value.objectValue)
        var written: [UInt8] = []
        JSONObjectWriter.write(to: &written) { addWithKeys(object, to: &$0) }
        #expect(written == JSONValue.object(object).serializedBytes())
        var built = JSONObject()
        addWithKeys(object, to: &built)
        #expect(built == object)
    }

    @Test("the tricky document's keys, made once, are written as the tree writes them")
    func trickyDocumentKeysMadeOnce() {
        let object = JSONObject(["document": trickyDocument, "again": trickyDocument])
        var written: [UInt8] = []
        JSONObjectWriter.write(to: &written) { addWithKeys(object, to: &$0) }
        #expect(written == JSONValue.object(object).serializedBytes())
        #expect(JSONKey("a\"b") == JSONKey(string: "a\"b") && JSONKey("a") != JSONKey("b"))
    }

    @Test("keys written in code, plain or needing escapes, are written as the same keys made at run time")
    func literalKeys() {
        func build<Builder: JSONObjectBuilder>(_ object: inout Builder, literal: Bool) {
            object.add(literal ? JSONKey("plain") : JSONKey(string: "plain"), integer: 1)
            object.add(literal ? JSONKey("quote\" and\\ tab\t") : JSONKey(string: "quote\" and\\ tab\t"), string: "x")
            object.addObject(literal ? JSONKey("é") : JSONKey(string: "é")) { inner in
                inner.add(literal ? JSONKey("first") : JSONKey(string: "first"), .bool(true))
            }
        }
        var fromLiterals: [UInt8] = []
        JSONObjectWriter.write(to: &fromLiterals) { build(&$0, literal: true) }
        var madeAtRunTime: [UInt8] = []
        JSONObjectWriter.write(to: &madeAtRunTime) { build(&$0, literal: false) }
        #expect(
            String(decoding: fromLiterals, as: UTF8.self)
                == #"{"plain":1,"quote\" and\\ tab\t":"x","é":{"first":true}}"#)
        #expect(fromLiterals == madeAtRunTime)
        #expect(JSONKey("quote\" and\\ tab\t").name == "quote\" and\\ tab\t")
        #expect(JSONObject { build(&$0, literal: true) } == JSONObject { build(&$0, literal: false) })
    }

    @Test("an empty object, empty nested objects and an empty array of objects are written as their trees are")
    func emptyContainers() {
        var written: [UInt8] = []
        JSONObjectWriter.write(to: &written) { _ in }
        #expect(written == Array("{}".utf8))
        written = []
        JSONObjectWriter.write(to: &written) { object in
            object.addObject("a") { _ in }
            object.addObjects("b", [Int]()) { _, _ in }
            object.addObjects("c", [1, 2]) { _, _ in }
            object.addObject("d") { $0.addObject("e") { _ in } }
        }
        #expect(String(decoding: written, as: UTF8.self) == #"{"a":{},"b":[],"c":[{},{}],"d":{"e":{}}}"#)
    }

    @Test("integers at both ends of 64 bits and nil members are written as the tree writes them")
    func integersAndAbsentMembers() {
        let object = JSONObject(["min": .integer(Int64.min), "max": .integer(Int64.max), "zero": .integer(0)])
        expectSameOutput(object)
        var written: [UInt8] = []
        JSONObjectWriter.write(to: &written) { object in
            object.add("absent", string: String?.none)
            object.add("absent number", integer: Int64?.none)
            object.add("absent value", JSONValue?.none)
            object.add("present", integer: Int64?.some(7))
        }
        #expect(String(decoding: written, as: UTF8.self) == #"{"present":7}"#)
    }

    @Test("text written in place as ASCII bytes is the string member a tree holds, next to other members")
    func asciiTextInPlace() {
        let text = Array("2024-06-05 12:00:00 Etc/GMT".utf8)
        func build<Builder: JSONObjectBuilder>(_ object: inout Builder) {
            object.add("before", integer: 1)
            object.add("date", asciiCount: text.count) { span in
                for byte in text { span.append(byte) }
            }
            object.add("after", string: "x")
        }
        var written: [UInt8] = []
        JSONObjectWriter.write(to: &written) { build(&$0) }
        let tree = JSONObject { build(&$0) }
        #expect(tree["date"] == .string("2024-06-05 12:00:00 Etc/GMT"))
        #expect(written == JSONValue.object(tree).serializedBytes())
    }
}
