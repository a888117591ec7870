import StrictJSON
import Testing

/// A reader over `text` (a JSON object) named `path` in errors.
private func reader(_ text: String, path: String = "config") throws -> JSONObjectReader {
    try JSONObjectReader(JSONValue(parsing: text), path: path)
}

/// The error `body` throws.
private func failure<T>(_ body: () throws(JSONFieldError) -> T) -> JSONFieldError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error
    }
}

@Suite("JSONObjectReader: typed members with their paths in every error")
struct JSONObjectReaderTests {
    @Test("a member that is absent or null reads as nil, whatever type is asked for")
    func absentAndNull() throws {
        let members = try reader(#"{"a": null}"#)
        for key in ["a", "b"] {
            #expect(try members.string(key) == nil)
            #expect(try members.bool(key) == nil)
            #expect(try members.integer(key, in: 0...10) == nil)
            #expect(try members.array(key) == nil)
            #expect(try members.strings(key) == nil)
            #expect(try members.object(key) == nil)
        }
    }

    @Test("a member of another type is an error naming its path and what was found")
    func wrongTypes() throws {
        let members = try reader(#"{"s": 1, "b": "yes", "a": {}, "o": [], "n": "3"}"#)
        #expect(
            failure { () throws(JSONFieldError) in try members.string("s") }
                == JSONFieldError(path: "config.s", rule: "must be a string, found a number"))
        #expect(
            failure { () throws(JSONFieldError) in try members.bool("b") }
                == JSONFieldError(path: "config.b", rule: "must be true or false, found a string"))
        #expect(
            failure { () throws(JSONFieldError) in try members.array("a") }
                == JSONFieldError(path: "config.a", rule: "must be an array, found an object"))
        #expect(
            failure { () throws(JSONFieldError) in try members.object("o") }
                == JSONFieldError(path: "config.o", rule: "must be a JSON object, found an array"))
        #expect(
            failure { () throws(JSONFieldError) in try members.integer("n", in: 0...10) }
                == JSONFieldError(path: "config.n", rule: "must be an integer, found a string \"3\""))
    }

    @Test("integers are whole numbers within the range asked for")
    func integers() throws {
        let members = try reader(#"{"ok": 7, "big": 11, "fraction": 1.5, "huge": 1e3}"#)
        #expect(try members.integer("ok", in: 0...10) == 7)
        #expect(
            failure { () throws(JSONFieldError) in try members.integer("big", in: 0...10) }?.rule
                == "must be between 0 and 10, found 11")
        #expect(
            failure { () throws(JSONFieldError) in try members.integer("fraction", in: 0...10) }?.rule
                == "must be an integer, found a number 1.5")
        #expect(
            failure { () throws(JSONFieldError) in try members.integer("huge", in: 0...10_000) }?.rule
                == "must be an integer, found a number 1e3")
    }

    @Test("a required string must be present and not empty")
    func requiredStrings() throws {
        let members = try reader(#"{"empty": "", "name": "x"}"#)
        #expect(try members.requiredString("name") == "x")
        #expect(
            failure { () throws(JSONFieldError) in try members.requiredString("missing") }
                == JSONFieldError(path: "config.missing", rule: "is required"))
        #expect(
            failure { () throws(JSONFieldError) in try members.requiredString("empty") }
                == JSONFieldError(path: "config.empty", rule: "must not be empty"))
    }

    @Test("an element of a string array that is not a string is named by its index")
    func stringArrays() throws {
        let members = try reader(#"{"list": ["a", "b"], "mixed": ["a", 2]}"#)
        #expect(try members.strings("list") == ["a", "b"])
        #expect(
            failure { () throws(JSONFieldError) in try members.strings("mixed") }
                == JSONFieldError(path: "config.mixed[1]", rule: "must be a string, found a number"))
    }

    @Test("a nested object's members are named under its path; the document's own have no prefix")
    func nestedPaths() throws {
        let limits = try #require(try reader(#"{"limits": {"threads": true}}"#).object("limits"))
        #expect(
            failure { () throws(JSONFieldError) in try limits.integer("threads", in: 0...8) }?.path
                == "config.limits.threads")
        let document = try reader(#"{"x": 1}"#, path: "")
        #expect(
            failure { () throws(JSONFieldError) in try document.string("x") }?.description
                == "x: must be a string, found a number")
    }

    @Test("an unknown key is refused with the keys that are known; the rest can be collected instead")
    func unknownKeys() throws {
        let members = try reader(#"{"name": "x", "nmae": "y", "extra": 1}"#)
        #expect(
            failure { () throws(JSONFieldError) in try members.rejectUnknownKeys(allowed: ["name", "size"]) }
                == JSONFieldError(path: "config.nmae", rule: "is not a known key (known: name, size)"))
        #expect(members.unknownMembers(known: ["name"]).keys == ["nmae", "extra"])
    }

    @Test("a value that is not an object is refused where the reader is made")
    func notAnObject() {
        #expect(
            failure { () throws(JSONFieldError) in try JSONObjectReader(.array([]), path: "body") }
                == JSONFieldError(path: "body", rule: "must be a JSON object, found an array"))
    }
}
