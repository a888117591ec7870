import StrictJSON
import Testing

/// A document with everything that is easy to get wrong: escapes, non-ASCII text, exact numbers, empty containers,
/// member order that is not alphabetical, and keys that need escaping.
let trickyDocument = JSONValue.object(
    JSONObject([
        "zeta \"quoted\" key": .string("back\\slash / \"quote\""),
        "controls": .string("\u{0}\u{1}\u{08}\u{09}\u{0A}\u{0B}\u{0C}\u{0D}\u{1B}\u{1F} \u{7F}"),
        "unicode": .string("é e\u{301} 世界 😀 \u{2028}\u{2029} \u{FEFF}"),
        "numbers": .array([.number("-0"), .number("9223372036854775807"), .number("1.5e10"), .number("0.10")]),
        "empty": .array([.string(""), .array([]), .object(JSONObject())]),
        "literals": .array([.null, .bool(true), .bool(false)]),
        "nested": .object(JSONObject(["b": .object(JSONObject(["a": .array([.array([.null])])]))])),
        "": .string("empty key"),
    ]))

@Suite("JSON serialisation")
struct JSONWriterTests {
    @Test("strings escape quote, backslash and every control character, and nothing else")
    func stringEscapes() {
        let text = JSONValue.string("\"\\/\u{0}\u{08}\t\n\u{0B}\u{0C}\r\u{1F}\u{7F}é😀").serialized()
        #expect(text == #""\"\\/\u0000\b\t\n\u000b\f\r\u001f"# + "\u{7F}é😀\"")
    }

    @Test("keys are escaped like strings")
    func keyEscapes() {
        let value = JSONValue.object(JSONObject(["a\"b\\c\nd": .null]))
        #expect(value.serialized() == #"{"a\"b\\c\nd":null}"#)
    }

    @Test("compact output has no whitespace and keeps member order")
    func compactOutput() {
        let value = JSONValue.object(
            JSONObject([
                "b": .array([.number("1"), .bool(true), .null]),
                "a": .object(JSONObject(["y": .string("x")])),
                "c": .array([]),
            ]))
        #expect(value.serialized() == #"{"b":[1,true,null],"a":{"y":"x"},"c":[]}"#)
    }

    @Test("numbers are written exactly as their text")
    func numbersVerbatim() {
        let value = JSONValue.array([
            .number("2000000123357229"), .number("-0"), .number("1.50"), .number("1E+2"), .integer(Int64.min),
            .integer(UInt64.max),
        ])
        #expect(value.serialized() == "[2000000123357229,-0,1.50,1E+2,-9223372036854775808,18446744073709551615]")
    }

    @Test("pretty output indents two spaces per level, one member or element per line")
    func prettyOutput() {
        let expected = """
            {
              "zeta \\"quoted\\" key": "back\\\\slash / \\"quote\\"",
              "controls": "\\u0000\\u0001\\b\\t\\n\\u000b\\f\\r\\u001b\\u001f \u{7F}",
              "unicode": "é e\u{301} 世界 😀 \u{2028}\u{2029} \u{FEFF}",
              "numbers": [
                -0,
                9223372036854775807,
                1.5e10,
                0.10
              ],
              "empty": [
                "",
                [],
                {}
              ],
              "literals": [
                null,
                true,
                false
              ],
              "nested": {
                "b": {
                  "a": [
                    [
                      null
                    ]
                  ]
                }
              },
              "": "empty key"
            }
            """
        #expect(trickyDocument.serialized(pretty: true) == expected)
    }

    @Test("pretty output of scalars and empty containers is the compact output")
    func prettyScalars() {
        for value: JSONValue in [.null, .bool(false), .number("1"), .string("a"), .array([]), .object(JSONObject())] {
            #expect(value.serialized(pretty: true) == value.serialized())
        }
    }

    @Test("compact and pretty output parse back to the same document", arguments: [false, true])
    func roundTrip(pretty: Bool) throws {
        let text = trickyDocument.serialized(pretty: pretty)
        #expect(try JSONValue(parsing: text) == trickyDocument)
    }

    @Test("parsing then serialising compact text gives the same text")
    func textRoundTrip() throws {
        let text = #"{"k":[1,-0.5e-7,"\u001f\"\\",{"":null}],"é":false}"#
        #expect(try JSONValue(parsing: text).serialized() == text)
    }

    @Test("write(to:) appends after what the buffer holds and leaves it untouched")
    func writeAppends() {
        var output = Array("data: ".utf8)
        JSONValue.array([.string("a\n"), .null]).write(to: &output)
        #expect(output == Array(#"data: ["a\n",null]"#.utf8))
    }

    @Test("a buffer emptied between documents holds each document's bytes in turn, in the capacity it has")
    func reusedBuffer() {
        var output: [UInt8] = []
        trickyDocument.write(to: &output, pretty: true)
        let capacity = output.capacity
        for value: JSONValue in [.string("short"), trickyDocument, .array([.number("1")])] {
            output.removeAll(keepingCapacity: true)
            value.write(to: &output)
            #expect(output == value.serializedBytes())
            #expect(output.capacity == capacity)
        }
    }
}
