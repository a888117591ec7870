@testable import StrictJSON
import Testing

// Work is counted, not timed: `probes` is how many keys an object compared or looked up in its index. Comparing each
// new key with every earlier one, as objects once did, makes 1 000 keys cost about 500 000 probes and 10 000 keys
// 100 times more; in proportion to the members, the second costs 10 times the first.

/// The text of an object of `count` members `"k0": 0, "k1": 1…`.
private func objectText(_ count: Int) -> String {
    "{" + (0..<count).map { "\"k\($0)\": \($0)" }.joined(separator: ", ") + "}"
}

/// The key probes made parsing `text`.
private func parsingProbes(_ text: String) throws -> Int {
    var parser = JSONParser(bytes: Array(text.utf8), maximumDepth: JSONValue.defaultMaximumDepth)
    _ = try parser.parseDocument()
    return parser.keyProbes
}

/// The key probes made building an object of `count` members by subscript, and the object.
private func buildingProbes(_ count: Int) -> (probes: Int, object: JSONObject) {
    var object = JSONObject()
    var probes = 0
    for index in 0..<count { object.setValue(.integer(index), forKey: "k\(index)", probes: &probes) }
    return (probes, object)
}

@Suite("Work done: objects of any size cost a constant number of key probes per member")
struct WorkDoneTests {
    @Test("parsing an object of n keys makes at most 3n key probes: 10 times the keys, about 10 times the probes")
    func parsingIsLinear() throws {
        let thousand = try parsingProbes(objectText(1000))
        let tenThousand = try parsingProbes(objectText(10_000))
        #expect(thousand <= 3 * 1000)
        #expect(tenThousand <= 3 * 10_000)
        #expect((9.0...11.0).contains(Double(tenThousand) / Double(thousand)))
    }

    @Test("a duplicate key far into a large object is found with a constant number of probes")
    func duplicateInLargeObject() throws {
        let text = String(objectText(10_000).dropLast()) + #", "k5000": 0}"#
        var parser = JSONParser(bytes: Array(text.utf8), maximumDepth: JSONValue.defaultMaximumDepth)
        let error = #expect(throws: JSONError.self) { try parser.parseDocument() }
        #expect(error?.reason == .duplicateKey("k5000"))
        #expect(parser.keyProbes <= 3 * 10_001)
    }

    @Test("building an object of n members by subscript makes at most 3n key probes")
    func buildingIsLinear() {
        let thousand = buildingProbes(1000)
        let tenThousand = buildingProbes(10_000)
        #expect(thousand.probes <= 3 * 1000)
        #expect(tenThousand.probes <= 3 * 10_000)
        #expect((9.0...11.0).contains(Double(tenThousand.probes) / Double(thousand.probes)))
        #expect(tenThousand.object.keys == (0..<10_000).map { "k\($0)" })
    }

    @Test(
        "finding a member of a large object is one probe wherever it is, and adding one is a second",
        arguments: ["k0", "k5000", "k9999", "absent"])
    func largeObjectAccess(key: String) {
        var object = buildingProbes(10_000).object
        var probes = 0
        let position = object.position(of: key, probes: &probes)
        #expect(probes == 1)
        #expect(position.map { object.members[$0].key } == (key == "absent" ? nil : key))
        probes = 0
        object.setValue(.null, forKey: key, probes: &probes)
        #expect(probes == (position == nil ? 2 : 1))
        #expect(object[key] == .null)
    }

    @Test("an object of at most 16 members compares keys instead of indexing them: at most 16 probes a lookup")
    func smallObjectAccess() {
        let object = buildingProbes(JSONObject.indexThreshold).object
        for key in object.keys + ["absent"] {
            var probes = 0
            _ = object.position(of: key, probes: &probes)
            #expect(probes <= JSONObject.indexThreshold)
        }
    }
}
