import StrictJSON

/// The reference implementation of JSON output: the writer StrictJSON had before it wrote bytes, kept here
/// unchanged in what it produces, so that tests can hold the byte writer to the same text. It grows a `String` one
/// Unicode scalar at a time, which is slow and easy to read; it is never used outside tests.
enum ReferenceJSONWriter {
    /// The JSON text of `value`: compact on one line, or indented by two spaces per level. Object members keep
    /// their order; strings escape only what RFC 8259 requires.
    static func serialized(_ value: JSONValue, pretty: Bool = false) -> String {
        var output = ""
        write(value, to: &output, pretty: pretty, indent: 0)
        return output
    }

    private static func write(_ value: JSONValue, to output: inout String, pretty: Bool, indent: Int) {
        switch value {
        case .null: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .number(let text): output += text
        case .string(let text): writeString(text, to: &output)
        case .array(let elements):
            writeContainer(
                elements, open: "[", close: "]", to: &output, pretty: pretty, indent: indent
            ) { element, output in
                write(element, to: &output, pretty: pretty, indent: indent + 1)
            }
        case .object(let object):
            writeContainer(
                object.members, open: "{", close: "}", to: &output, pretty: pretty, indent: indent
            ) { member, output in
                writeString(member.key, to: &output)
                output += pretty ? ": " : ":"
                write(member.value, to: &output, pretty: pretty, indent: indent + 1)
            }
        }
    }

    private static func writeContainer<Element>(
        _ elements: [Element],
        open: String,
        close: String,
        to output: inout String,
        pretty: Bool,
        indent: Int,
        writeElement: (Element, inout String) -> Void
    ) {
        output += open
        guard !elements.isEmpty else {
            output += close
            return
        }
        let innerPadding = pretty ? "\n" + String(repeating: "  ", count: indent + 1) : ""
        for (position, element) in elements.enumerated() {
            if position > 0 { output += "," }
            output += innerPadding
            writeElement(element, &output)
        }
        if pretty { output += "\n" + String(repeating: "  ", count: indent) }
        output += close
    }

    private static func writeString(_ text: String, to output: inout String) {
        output += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case "\u{08}": output += "\\b"
            case "\u{0C}": output += "\\f"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}
