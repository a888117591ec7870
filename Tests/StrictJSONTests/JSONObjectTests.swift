import StrictJSON
import Testing

/// A small deterministic random number generator (SplitMix64), so that a failing sequence can be replayed.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}

/// An object of `count` members `k0: 0`, `k1: 1`… added in that order.
private func numberedObject(_ count: Int) -> JSONObject {
    var object = JSONObject()
    for index in 0..<count { object["k\(index)"] = .integer(index) }
    return object
}

@Suite("JSONObject: members in the order they were added, each key once, at every size")
struct JSONObjectTests {
    @Test("setting an existing member replaces it in place")
    func replaceInPlace() {
        var object = JSONObject(["a": .number("1"), "b": .number("2"), "c": .number("3")])
        object["b"] = .string("two")
        #expect(object.keys == ["a", "b", "c"])
        #expect(object["b"] == .string("two"))
    }

    @Test("setting a new member appends it; setting nil removes it")
    func appendAndRemove() {
        var object = JSONObject(["a": .null])
        object["z"] = .bool(true)
        object["a"] = nil
        object["missing"] = nil
        #expect(object.keys == ["z"])
        #expect(JSONValue.object(object).serialized() == #"{"z":true}"#)
    }

    @Test("subscripting a non-object value gives nil")
    func subscriptOnNonObject() {
        #expect(JSONValue.array([.null])["a"] == nil)
        #expect(JSONValue.object(JSONObject(["a": .null]))["a"] == .null)
    }

    @Test("members keep the order they were added in; replacing one keeps its place", arguments: [1, 2, 16, 17, 200])
    func orderAndReplacement(count: Int) {
        var object = numberedObject(count)
        #expect(object.keys == (0..<count).map { "k\($0)" })
        object["k\(count / 2)"] = .string("replaced")
        #expect(object.members.count == count)
        #expect(object.members[count / 2].key == "k\(count / 2)")
        #expect(object.members[count / 2].value == .string("replaced"))
        for index in 0..<count where index != count / 2 { #expect(object["k\(index)"] == .integer(index)) }
        #expect(object["absent"] == nil)
    }

    @Test("removing a member closes the gap: the members after it keep their order and stay readable")
    func removal() {
        var object = numberedObject(40)
        object["k3"] = nil
        object["k39"] = nil
        object["absent"] = nil
        #expect(object.keys == (0..<40).filter { $0 != 3 && $0 != 39 }.map { "k\($0)" })
        for index in 4..<39 { #expect(object["k\(index)"] == .integer(index)) }
        object["k3"] = .null
        #expect(object.keys.last == "k3")
    }

    @Test("sets, replacements and removals in any order agree with a plain list of members", arguments: [1, 2, 3])
    func agreesWithAList(seed: UInt64) {
        // Forty possible keys, so that the object grows past and shrinks below any small size many times over.
        var random = SplitMix64(state: seed)
        var object = JSONObject()
        var list: [(key: String, value: JSONValue)] = []
        for step in 0..<4000 {
            let key = "key \(Int.random(in: 0..<40, using: &random))"
            let value: JSONValue? = Int.random(in: 0..<3, using: &random) == 0 ? nil : .integer(step)
            object[key] = value
            let position = list.firstIndex { $0.key == key }
            switch (position, value) {
            case (let position?, let value?): list[position].value = value
            case (let position?, nil): list.remove(at: position)
            case (nil, let value?): list.append((key, value))
            case (nil, nil): break
            }
            let probe = "key \(Int.random(in: 0..<40, using: &random))"
            guard object.keys == list.map(\.key), object.members.map(\.value) == list.map(\.value),
                object[probe] == list.first(where: { $0.key == probe })?.value
            else {
                Issue.record("seed \(seed), step \(step): the object \(object.keys) should be \(list.map(\.key))")
                return
            }
        }
    }

    @Test("two objects are equal, and hash alike, exactly when they have the same members in the same order")
    func equality() {
        var shrunk = numberedObject(30)
        for index in 10..<30 { shrunk["k\(index)"] = nil }
        #expect(shrunk == numberedObject(10))
        #expect(shrunk.hashValue == numberedObject(10).hashValue)
        #expect(numberedObject(30) == numberedObject(30))
        #expect(numberedObject(30).hashValue == numberedObject(30).hashValue)

        var reordered = numberedObject(30)
        reordered["k0"] = nil
        reordered["k0"] = .integer(0)
        #expect(reordered != numberedObject(30))
        #expect(numberedObject(30) != numberedObject(31))
    }

    @Test("a copy is a value: changing it leaves the original as it was")
    func valueSemantics() {
        let original = numberedObject(100)
        var copy = original
        copy["k50"] = nil
        copy["k0"] = .string("changed")
        copy["new"] = .null
        #expect(original == numberedObject(100))
        #expect(original["k50"] == .integer(50))
        #expect(copy["k50"] == nil)
        #expect(copy["k51"] == .integer(51))
    }

    @Test("a literal that repeats a key keeps its first place and its last value")
    func literalWithRepeatedKey() {
        let object = JSONObject(["a": .integer(1), "b": .integer(2), "a": .integer(3)])
        #expect(object.keys == ["a", "b"])
        #expect(object.members.map(\.value) == [.integer(3), .integer(2)])
    }
}
